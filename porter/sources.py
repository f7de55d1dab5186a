"""Reading a source file once: its bytes for the pipelines and for writing OUT, and its mode."""

from __future__ import annotations

import os

from porter import filetypes

# A file no pipeline handles is read whole only up to this size (it is written to OUT from
# memory); a larger one is only peeked at and later copied by the kernel, never held.
KEEP_UNHANDLED = 256 * 1024
HEAD = 256  # bytes a file type may be recognised by (a shebang)


def read_source(root: str, rel: str) -> tuple[bytes, int, bool]:
    """(bytes, mode, whole) of the file `rel` of the tree at `root`: the whole file, or only
    its head when it is large and no pipeline wants it. (Plain strings: this runs for every
    file of the tree, and pathlib costs more than the read.)"""
    path = f"{root}/{rel}"
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        if st.st_size <= KEEP_UNHANDLED:
            return fh.read(), st.st_mode, True
        head = fh.read(HEAD)
        if filetypes.handler_for(rel, head) is None:
            return head, st.st_mode, False
        return head + fh.read(), st.st_mode, True
