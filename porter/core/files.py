"""Writing a file so that nobody sees half of it: the one atomic writer of porter.

In-place conversion, the result cache and the parsed-data cache all write through here.
"""

from __future__ import annotations

import os
from pathlib import Path


def write_atomically(path: Path, data: bytes, *, mode: int | None = None, durable: bool = False) -> None:
    """Write `data` to a temporary file beside `path`, then rename it over `path`.

    A reader, or a crash at any moment, sees the old file or the new one, never half of one.
    The temporary name is this process's own (no other live process has its pid) and is
    never followed if something put a link there. `durable` also syncs the data to disk
    before the rename (the user's own files); `mode` sets the new file's permissions.
    Raises OSError; the temporary file is removed on failure.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.porter-tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(tmp, flags, 0o600 if mode is None else mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o644 if mode is None else mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
