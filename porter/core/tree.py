"""Walking a source tree: what to convert, what to copy, what never to follow."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
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


def walk(root: Path, exclude: Path | None = None,
         prune: Callable[[str, str], bool] | None = None) -> Iterator[Entry]:
    """Regular files and symlinks under root, sorted, without descending into symlinked
    directories. Sockets, pipes and devices are left out: reading a named pipe would wait
    forever, and none of them belongs in a ported tree.

    On os.scandir, whose entries know their own type: no extra system call per file.
    `prune(rel, path)` says which folders not to enter (the file selection of a scan).
    """
    exclude_s = str(exclude) if exclude else None
    yield from _walk(str(root), "", exclude_s, prune)


def _walk(folder: str, rel_dir: str, exclude: str | None, prune: Callable[[str, str], bool] | None = None) -> Iterator[Entry]:
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return  # unreadable folder: nothing to convert in it
    subdirs = []
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        if entry.is_symlink():
            yield Entry(rel, True)
        elif entry.is_dir():
            if entry.name in SKIP_DIRS or (not rel_dir and entry.name in (REPORT_DIR, LORA_DIR)) or entry.path == exclude:
                continue
            if prune is not None and prune(rel, entry.path):
                continue
            subdirs.append((entry.path, rel))
        elif entry.is_file():
            yield Entry(rel, False)
    for path, rel in subdirs:
        yield from _walk(path, rel, exclude, prune)
