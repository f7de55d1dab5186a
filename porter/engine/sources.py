"""Reading a source file for the pipelines: whole when one handles it, else only its head
(images, archives, model weights: never read whole, the copy into OUT is the kernel's)."""

from __future__ import annotations

import os

from porter.engine.registry import head_matters, type_for

HEAD = 256  # bytes a file type may be recognised by (a shebang)


class TooLarge(Exception):
    """A file a pipeline handles is larger than the limit: its size in bytes."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(size, limit)
        self.size, self.limit = size, limit

    @property
    def reason(self) -> str:
        mb = 1024 * 1024
        return (
            f"larger than {self.limit / mb:g} MB ({self.size / mb:.1f} MB): left as it is, "
            f"not ported (--max-file-size raises the limit)"
        )


def source_kind(root: str, rel: str) -> tuple[bytes, str | None]:
    """(head, file type) of the file `rel` of the tree at `root`, reading only its head, and
    that only when its name does not decide (plain strings: this runs for every file of the
    tree, and pathlib costs more than the read)."""
    if not head_matters(rel):
        found = type_for(rel, b"")
        return b"", found.name if found is not None else None
    with open(f"{root}/{rel}", "rb") as fh:
        head = fh.read(HEAD)
    found = type_for(rel, head)
    return head, found.name if found is not None else None


def read_source(root: str, rel: str, max_bytes: int | None = None) -> tuple[bytes, str | None]:
    """(bytes, file type) of the file `rel`: the whole file and its type when a pipeline
    handles it, else only what `source_kind` read (the head, or nothing) and None. Raises
    TooLarge for a file a pipeline handles that is over `max_bytes` (parsing a 50 MB Python
    file costs minutes and gigabytes)."""
    head, kind = source_kind(root, rel)
    if kind is None:
        return head, None
    with open(f"{root}/{rel}", "rb") as fh:  # a second open only for the few typed by their head
        _check_size(fh, max_bytes)
        return fh.read(), kind


def _check_size(fh, max_bytes: int | None) -> None:
    if max_bytes is not None:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise TooLarge(size, max_bytes)
