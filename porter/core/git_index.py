"""The paths git tracks in a tree, read from its repository's index (`.git/index`).

A file that a .gitignore pattern matches is still part of the project when git tracks it (a
pattern only keeps untracked files out of `git add`): the report names such files among what
the file selection left out. porter runs no git command: the index is a file of fixed layout
(gitformat-index: versions 2 and 3 pad each entry to 8 bytes, version 4 compresses each path
against the one before). A split index, a format porter does not know or an unreadable file
answer None: nothing is claimed then.
"""

from __future__ import annotations

import os
import struct
from bisect import bisect_left
from pathlib import Path

_HEADER = struct.Struct(">4sII")  # "DIRC", version, entries
_FIXED = 62  # ctime, mtime, dev, ino, mode, uid, gid, size (40 bytes), object name (20), flags (2)
_EXTENDED = 0x4000  # version 3+: two more flag bytes follow
_NAME_MASK = 0x0FFF


def tracked_below(src: Path) -> frozenset[str] | None:
    """The paths git tracks below `src`, relative to it (POSIX); None where no index says."""
    found = _repository(Path(src).resolve())
    if found is None:
        return None
    git_dir, top = found
    try:
        data = (git_dir / "index").read_bytes()
    except OSError:
        return None
    paths = _paths(data)
    if paths is None:
        return None
    prefix = Path(os.path.relpath(Path(src).resolve(), top)).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    return frozenset(p[len(prefix) :] for p in paths if p.startswith(prefix))


def _repository(src: Path) -> tuple[Path, Path] | None:
    """(git directory, work tree top) of the repository holding `src`: a `.git` folder, or a
    `.git` file naming one (`gitdir: ...`, a worktree or a submodule)."""
    for folder in (src, *src.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git, folder
        if dot_git.is_file():
            try:
                line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return None
            if not line.startswith("gitdir:"):
                return None
            git_dir = Path(line[len("gitdir:") :].strip())
            return (git_dir if git_dir.is_absolute() else folder / git_dir), folder
    return None


def _paths(data: bytes) -> list[str] | None:
    if len(data) < _HEADER.size:
        return None
    signature, version, count = _HEADER.unpack_from(data)
    if signature != b"DIRC" or version not in (2, 3, 4):
        return None  # not an index, or a version porter does not know
    out: list[str] = []
    pos, previous = _HEADER.size, b""
    try:
        for _ in range(count):
            flags = struct.unpack_from(">H", data, pos + _FIXED - 2)[0]
            start = pos + _FIXED + (2 if version >= 3 and flags & _EXTENDED else 0)
            if version == 4:
                strip, start = _varint(data, start)
                end = data.index(b"\0", start)
                name = previous[: len(previous) - strip] + data[start:end]
                pos = end + 1
            else:
                end = data.index(b"\0", start) if flags & _NAME_MASK == _NAME_MASK else start + (flags & _NAME_MASK)
                name = data[start:end]
                pos += (end - pos + 8) // 8 * 8  # the entry and 1 to 8 NUL bytes, a multiple of 8
            previous = name
            out.append(name.decode("utf-8", "surrogateescape"))
        if _split(data, pos):
            return None  # a split index: most entries are in the shared index it links to
    except (struct.error, ValueError, IndexError):
        return None
    return out


def _split(data: bytes, pos: int) -> bool:
    """Whether the extensions after the entries (each a 4-byte signature and a 4-byte size,
    before the 20-byte checksum) hold the split index's `link`."""
    while pos + 8 <= len(data) - 20:
        signature, size = struct.unpack_from(">4sI", data, pos)
        if signature == b"link":
            return True
        pos += 8 + size
    return False


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """git's offset encoding (varint.c): each continuation adds one before shifting."""
    byte = data[pos]
    pos += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[pos]
        pos += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, pos


def tracked_among(paths: list[str], tracked: frozenset[str]) -> list[str]:
    """The `paths` (files, and folders with a trailing slash) that hold a file of `tracked`."""
    ordered = sorted(tracked)
    out = []
    for path in paths:
        if path.endswith("/"):
            at = bisect_left(ordered, path)
            if at < len(ordered) and ordered[at].startswith(path):
                out.append(path)
        elif path in tracked:
            out.append(path)
    return out
