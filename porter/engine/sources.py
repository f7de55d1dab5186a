"""Reading a source file for the pipelines: whole when one handles it, else only its head
(images, archives, model weights: never read whole, the copy into OUT is the kernel's)."""

from __future__ import annotations

from porter.engine.registry import head_matters, type_for

HEAD = 256  # bytes a file type may be recognised by (a shebang)


def read_source(root: str, rel: str) -> tuple[bytes, str | None]:
    """(bytes, file type) of the file `rel` of the tree at `root`: the whole file and its type
    when a pipeline handles it, else only its head (nothing when its name alone says no
    pipeline wants it) and None. (Plain strings: this runs for every file of the tree, and
    pathlib costs more than the read.)"""
    if not head_matters(rel):  # the name decides: one read, or none
        found = type_for(rel, b"")
        if found is None:
            return b"", None
        with open(f"{root}/{rel}", "rb") as fh:
            return fh.read(), found.name
    with open(f"{root}/{rel}", "rb") as fh:
        head = fh.read(HEAD)
        found = type_for(rel, head)
        if found is None:
            return head, None
        return head + fh.read(), found.name
