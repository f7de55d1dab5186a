"""Walking a source tree: what to convert, what to copy, what never to follow."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from porter.core.targets import TARGETS

# Never copied: version control internals, and porter's own outputs from an earlier run.
SKIP_DIRS = {".git", ".hg", ".svn"}
REPORT_DIR = "porter_report"
LORA_DIR = "porter_lora"


# requirements-<target>.txt: the pip constraints file for the target (porter/filetypes/constraints.py).
# What `porter verify OUT` adds to OUT/porter_report (porter/verify/report.py): still porter's folder.
VERIFY_FILES = frozenset({"verify.json"})
REPORT_FILES = frozenset(
    {"changes.patch", "report.json", "report.md", "report.html", *(f"requirements-{t}.txt" for t in TARGETS)}
)


@dataclass(frozen=True)
class Entry:
    rel: str  # POSIX-style path relative to the tree root
    is_symlink: bool
    # Set for what is neither read nor copied, with the reason the report gives:
    skipped: str | None = None  # special files (pipes, sockets, devices), porter's old outputs
    failed: str | None = None  # what cannot be read (an unreadable folder)


def walk(
    root: Path,
    exclude: Path | None = None,
    prune: Callable[[str, str], bool] | None = None,
    dirs: dict[str, list[int] | None] | None = None,
    listed: Callable[[str, set[str]], None] | None = None,
) -> Iterator[Entry]:
    """Regular files and symlinks under root, sorted, without descending into symlinked
    directories. Sockets, pipes and devices are never read (reading a named pipe would wait
    forever) but are yielded with `skipped` set; a folder that cannot be read is yielded
    with `failed` set: the report lists both, nothing is dropped silently. porter's own
    outputs of an earlier run (porter_report/, porter_lora/ at the top, as porter writes
    them) are yielded once each, skipped; a folder of those names that is not porter's is
    the user's and walked like any other.

    On os.scandir, whose entries know their own type: no extra system call per file.
    `prune(rel, path)` says which folders not to enter (the file selection of a scan).
    `dirs`, when given, receives the `signature` of every folder the walk lists or leaves
    out by its relative path ("" for the root): while they all keep their signatures, a walk
    would yield the same names (porter/engine/tree_index.py lists a tree again from them).
    `listed(rel_dir, names)` is told each folder's names before any of its entries is yielded
    or pruned (the file selection learns there which folders hold a .gitignore).
    """
    exclude_s = str(exclude) if exclude else None
    if dirs is not None:
        dirs[""] = signature(str(root))
    yield from _walk(str(root), "", exclude_s, prune, dirs, listed)


def signature(path: str) -> list[int] | None:
    """What changes whenever a file's bytes or a folder's names do (as git's index keeps it):
    size, modification and change times, inode; None when nothing is there. The change time
    moves with every write, rename or chmod and cannot be set back (`touch`, `cp -p`)."""
    try:
        return stat_signature(os.lstat(path))
    except OSError:
        return None


def stat_signature(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _walk(
    folder: str,
    rel_dir: str,
    exclude: str | None,
    prune: Callable[[str, str], bool] | None = None,
    dirs: dict[str, list[int] | None] | None = None,
    listed: Callable[[str, set[str]], None] | None = None,
) -> Iterator[Entry]:
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        if rel_dir:  # the root itself is the caller's to check
            yield Entry(rel_dir, False, failed=f"cannot read folder: {exc.strerror}")
        return
    if listed is not None:
        listed(rel_dir, {entry.name for entry in entries})
    subdirs = []
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        if entry.is_symlink():
            yield Entry(rel, True)
        elif entry.is_dir():
            if entry.name in SKIP_DIRS or entry.path == exclude:
                continue
            if dirs is not None:
                dirs[rel] = signature(entry.path)
            if not rel_dir and entry.name in (REPORT_DIR, LORA_DIR) and porters_own(entry.path, entry.name):
                yield Entry(rel, False, skipped="porter's output of an earlier run: not converted or copied")
                continue
            if prune is not None and prune(rel, entry.path):
                continue
            subdirs.append((entry.path, rel))
        elif entry.is_file():
            yield Entry(rel, False)
        else:
            yield Entry(rel, False, skipped=f"{_special_kind(entry)}: not read or copied")
    for path, rel in subdirs:
        yield from _walk(path, rel, exclude, prune, dirs, listed)


def _special_kind(entry: os.DirEntry) -> str:
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except OSError:
        return "special file"
    if stat.S_ISFIFO(mode):
        return "named pipe (special file)"
    if stat.S_ISSOCK(mode):
        return "socket (special file)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device (special file)"
    return "special file"


def porters_own(path: str, name: str) -> bool:
    """Whether the folder `path` (named porter_report or porter_lora) is what porter writes:
    a report folder holds only the report files and its report.json is porter's; a LoRA
    folder holds nothing but the files porter renders, and those of train_lora.py,
    run_lora.sh and README.md there (one at least) say porter rendered them. Anything else
    there is the user's."""
    try:
        # a temporary file porter's killed writer left there is porter's too
        names = {n for n in os.listdir(path) if not (n.startswith(".") and n.endswith(".porter-tmp"))}
    except OSError:
        return False
    if name == REPORT_DIR:
        if "report.json" not in names or not names <= REPORT_FILES | VERIFY_FILES:
            return False
        try:
            with open(f"{path}/report.json", "rb") as fh:
                head = fh.read(4096)
        except OSError:
            return False
        return b'"schema_version"' in head and b'"porter_version"' in head
    if not names or not names <= LORA_FILES:
        return False
    # each of the rendered files there says porter rendered it (a killed run may have
    # written only some of them)
    for file in names & {"train_lora.py", "run_lora.sh", "README.md"}:
        try:
            with open(f"{path}/{file}", "rb") as fh:
                if b"porter" not in fh.read(2048).lower():
                    return False
        except OSError:
            return False
    return bool(names & {"train_lora.py", "run_lora.sh", "README.md"})


# What porter writes into porter_lora/ (porter/lora/render.py).
LORA_FILES = frozenset(
    {"train_lora.py", "run_lora.sh", "README.md", "ds_config.json", "ds_config_zero3.json", "llamafactory"}
)
