"""Walking a source tree: what to convert, what to copy, what never to follow."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# Never copied: version control internals, and porter's own outputs from an earlier run.
SKIP_DIRS = {".git", ".hg", ".svn"}
REPORT_DIR = "porter_report"
LORA_DIR = "porter_lora"


@dataclass(frozen=True)
class Entry:
    rel: str  # POSIX-style path relative to the tree root
    is_symlink: bool


def walk(root: Path, exclude: Path | None = None) -> Iterator[Entry]:
    """Files and symlinks under root, sorted, without descending into symlinked directories."""
    exclude_s = str(exclude) if exclude else None
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root)
        keep = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if d in SKIP_DIRS or (rel_dir == "." and d in (REPORT_DIR, LORA_DIR)) or full == exclude_s:
                continue
            if os.path.islink(full):
                yield Entry(_rel(rel_dir, d), True)
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            yield Entry(_rel(rel_dir, name), os.path.islink(full))


def _rel(rel_dir: str, name: str) -> str:
    return name if rel_dir == "." else f"{rel_dir.replace(os.sep, '/')}/{name}"
