"""What the last run saw of a tree, so that a re-run reads only what changed.

- The listing: the files the selection chose, with the signature (porter/core/tree.py
  `signature`: size, modification and change times, inode, as git's index keeps them) of
  every folder the walk listed and of every .gitignore or .git it consulted. While all keep
  their signatures the walk would choose the same files, so it is not walked again (nor
  are the .gitignore patterns compiled).
- Each file: its signature, file type, line count and the digest of its bytes. A file with
  the same signature is not opened: its digest keys the result cache, which answers the
  rest. An unchanged tree is neither walked nor read.

A signature is trusted only when the thing was last modified at least `RACY_NS` before the
index was written (git's "racy" rule): a change made within the file system's timestamp
granularity of the previous read could otherwise keep every recorded value.

One index per tree (its absolute path) in the run's cache directory, written atomically
only when something was walked or read; anything that does not load or verify is an empty
index.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from porter import __version__
from porter.core.files import plain_rel
from porter.core.fileset import LeftOut, TreeFilter
from porter.core.tree import Entry, signature, stat_signature
from porter.engine.cache import code_fingerprint, read_entry, write_entry

T = TypeVar("T")

RACY_NS = 2_000_000_000  # 2 s: coarser than any file system's timestamp granularity porter meets
LISTINGS_KEPT = 4


class TreeIndex:
    """`listing(...)` the files of the tree; `seen(rel, st)` the (file type, digest)
    recorded for an unchanged file, `record(...)` what was just read; `save()` at the end."""

    def __init__(self, cache_dir: Path | None, src: Path) -> None:
        self.cache_dir = cache_dir
        self.src = str(src)
        # Another porter (version or code: file types may differ) keeps another index.
        self.rel = f"trees/{_digest(f'{__version__}|{code_fingerprint()}|{os.path.abspath(src)}')[:32]}.json"
        self.files: dict[str, list] = {}
        self.fresh: dict[str, list] = {}
        self.listings: dict[str, dict] = {}  # selection key -> listing (check's, convert's...)
        self.memos: dict[str, dict] = {}  # what was derived from a few files (the pins' decision)
        self.changed = False  # something was walked or read (new, changed or not yet trusted)
        self.trusted_before = 0  # what was modified at or after this (ns) is looked at again
        if cache_dir is not None:
            path = cache_dir / self.rel
            try:
                loaded = read_entry(path, self.rel)
                written = os.stat(path).st_mtime_ns  # the file system's clock, as the files' own times
            except (OSError, ValueError, KeyError, TypeError):
                return
            if isinstance(loaded, dict) and isinstance(loaded.get("files"), dict):
                self.files = loaded["files"]
                listings, memos = loaded.get("listings"), loaded.get("memos")
                self.listings = listings if isinstance(listings, dict) else {}
                self.memos = memos if isinstance(memos, dict) else {}
                self.trusted_before = written - RACY_NS

    def listing(self, chosen: TreeFilter, exclude: Path | None) -> list[Entry]:
        """What `chosen.entries(exclude)` yields: from the index while nothing it depends on
        has changed, else walked (and recorded)."""
        # OUT is never inside SRC (convert refuses it), so a run's OUT does not change what
        # the walk sees unless it is: it is part of the key only then.
        inside = exclude is not None and os.path.abspath(exclude).startswith(os.path.abspath(self.src) + os.sep)
        key = f"{chosen.selection!r}|{exclude if inside else ''}"
        stored = self.listings.get(key)
        if (
            chosen.selection.only is None
            and isinstance(stored, dict)
            and all(
                self._unchanged(f"{self.src}/{rel}" if rel else self.src, sig)
                for rel, sig in stored.get("dirs", {}).items()
            )
            and all(self._unchanged(path, sig) for path, sig in stored.get("consulted", {}).items())
        ):
            try:
                entries = [Entry(rel, bool(link), skipped, failed) for rel, link, skipped, failed in stored["entries"]]
                # The index is untrusted input: a path of it that would lead out of the tree
                # (`../x.py`, `/etc/x`, or through a link: its folder is not one the walk
                # listed) makes the whole listing void, and the tree is walked.
                listed = stored.get("dirs", {})
                if all(
                    isinstance(e.rel, str) and plain_rel(e.rel) and e.rel.rpartition("/")[0] in listed for e in entries
                ):
                    chosen.left_out = LeftOut.from_plain(stored.get("left_out"))  # what the walk would have left out
                    return entries
            except (KeyError, TypeError, ValueError):
                pass
        dirs: dict[str, list[int] | None] = {}
        entries = list(chosen.entries(exclude, dirs))
        if chosen.selection.only is None:
            self.listings.pop(key, None)
            self.listings[key] = {
                "dirs": dirs,
                "consulted": dict(chosen.consulted),
                "entries": [[e.rel, e.is_symlink, e.skipped, e.failed] for e in entries],
                "left_out": chosen.left_out.plain(),
            }
            self.changed = True
        return entries

    def remembered(self, key: str, paths: list[Path], derive: Callable[[], T]) -> T:
        """`derive()`, or what it gave before while every one of `paths` (present or absent)
        keeps its signature. The value must be plain JSON data."""
        stored = self.memos.get(key)
        if (
            isinstance(stored, dict)
            and isinstance(stored.get("files"), dict)
            and "value" in stored
            and set(stored["files"]) == {str(p) for p in paths}
            and all(self._unchanged(path, sig) for path, sig in stored["files"].items())
        ):
            return stored["value"]
        files = {str(p): signature(str(p)) for p in paths}  # before reading: a change meanwhile is seen next time
        value = derive()
        self.memos[key] = {"files": files, "value": value}
        self.changed = True
        return value

    def _unchanged(self, path: str, recorded: list[int] | None) -> bool:
        now = signature(path)
        if now != recorded:
            return False
        return now is None or max(now[1], now[2]) < self.trusted_before

    @property
    def empty(self) -> bool:
        """No file of the tree is recorded (a first run, or a cache without its index)."""
        return not self.files

    def seen(self, rel: str, st: os.stat_result) -> tuple[str | None, str] | None:
        entry = self.files.get(rel)
        sig = stat_signature(st)
        if (
            not isinstance(entry, list)
            or len(entry) != 6
            or entry[:4] != sig
            or max(st.st_mtime_ns, st.st_ctime_ns) >= self.trusted_before
        ):
            return None
        self.fresh[rel] = entry
        return entry[4], entry[5]

    def record(self, rel: str, st: os.stat_result, kind: str | None, digest: str) -> None:
        self.fresh[rel] = [*stat_signature(st), kind, digest]
        self.changed = True

    def save(self) -> None:
        """Write what this run saw when it walked or read anything or a file is gone; a run
        over an unchanged tree writes nothing. (Rewriting after a racy file was read again is
        what lets the next run trust it.)"""
        if self.cache_dir is not None and (self.changed or len(self.fresh) != len(self.files)):
            # The listings of the last few selections (check's and convert's differ), newest last.
            kept = dict(list(self.listings.items())[-LISTINGS_KEPT:])
            write_entry(
                self.cache_dir, self.rel, self.rel, {"files": self.fresh, "listings": kept, "memos": self.memos}
            )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
