"""Where in the tree a printed traceback points."""

from __future__ import annotations

import os
import re
from pathlib import Path

_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def innermost_frame(output: str, root: Path) -> tuple[str | None, int]:
    """(file relative to root, line) of the last traceback frame inside root, else (None, 0)."""
    base = os.path.realpath(root) + os.sep
    found: tuple[str | None, int] = (None, 0)
    for path, line in _FRAME.findall(output):
        real = os.path.realpath(path)
        if real.startswith(base):
            found = (os.path.relpath(real, base).replace(os.sep, "/"), int(line))
    return found
