"""Writing results: the OUT tree, or atomic in-place writes. Nothing the user owns is lost.

SRC is only written with --in-place, one file at a time through a temporary file and
os.replace, so a crash leaves either the old or the new file. In OUT, porter never writes
through a symlink: links are recreated as links, and a path whose parent resolves outside
OUT is refused.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from porter.core.files import write_atomically
from porter.core.model import FileResult
from porter.engine.parallel import ForkedMap
from porter.core.tree import walk

if TYPE_CHECKING:
    from porter.engine.runner import RunResult


# Trees with fewer files are copied here and now: forking costs more.
_BACKGROUND_WRITES = 64


class DestinationError(Exception):
    """OUT cannot be used; the message says why."""


def default_out(src: Path, target: str) -> Path:
    return src.parent / f"{src.name}_{target}"


def check_destination(src: Path, out: Path, force: bool) -> None:
    """Refuse OUT inside SRC, OUT == SRC and a non-empty OUT without --force."""
    src_r, out_r = src.resolve(), out.resolve()
    if src_r == out_r:
        raise DestinationError(f"output {out} is the source tree; use --in-place to convert it in place")
    if src_r in out_r.parents:
        raise DestinationError(f"output {out} is inside the source tree {src}; choose a directory outside it")
    if out_r in src_r.parents:
        raise DestinationError(f"output {out} contains the source tree {src}; choose another directory")
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not force:
        raise DestinationError(f"output {out} exists and is not empty; pass --force to write into it")


class _Dirs:
    """Directories of OUT, made on demand, never through a symlink.

    Each directory is checked once, component by component from OUT down: a component that
    is a symlink (an OUT written into with --force may hold one) refuses everything below
    it, so porter cannot be led to write outside OUT.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        self.known: dict[str, bool] = {"": True}

    def ready(self, rel_dir: str) -> bool:
        if rel_dir in self.known:
            return self.known[rel_dir]
        ok = self.ready(rel_dir.rpartition("/")[0]) and _make_dir(f"{self.out}/{rel_dir}")
        self.known[rel_dir] = ok
        return ok


def _make_dir(path: str) -> bool:
    """A real directory at `path` (made if missing); False when `path` is a symlink. Two
    writer processes may make the same directory at once: whoever loses finds it made."""
    if os.path.islink(path):
        return False
    if os.path.isdir(path):
        return True
    try:
        os.mkdir(path)
    except FileExistsError:
        if os.path.islink(path):
            return False
        if not os.path.isdir(path):  # a file where SRC has a directory: SRC wins
            os.unlink(path)
            return _make_dir(path)
    return True


class TreeWriter:
    """Writes OUT: every file of SRC as it is, by a forked process that starts before the
    conversion (`start_copy`: creating hundreds of files is kernel work, done beside
    porter's own); then each converted file over its copy (`write`), and symlinks as links
    (`links`). Modes are kept, times are not (as `cp`). `problems` says what was not written.
    """

    def __init__(self, src: Path, out: Path, background: bool = True) -> None:
        self.src, self.out = src, out
        self.background = background  # False: every write in this process (--jobs 1)
        out.mkdir(parents=True, exist_ok=True)
        self.dirs = _Dirs(out)
        self.fresh = not any(out.iterdir())
        self.problems: list[str] = []
        self.copied: set[str] = set()  # copied as in SRC
        self.failed: set[str] = set()  # not written; the problem is said once
        self._copying: tuple[ForkedMap, list[str]] | None = None
        umask = os.umask(0)
        os.umask(umask)
        self.new_file_mode = 0o666 & ~umask

    def start_copy(self, exclude: Path | None = None) -> None:
        """Copy every regular file of SRC into OUT as it is, beside this process's work."""
        rels = [entry.rel for entry in walk(self.src, exclude) if not entry.is_symlink]
        if self.background and len(rels) >= _BACKGROUND_WRITES:
            self._copying = ForkedMap(self._copy, rels, jobs=2), rels  # this process joins in `write`
        else:
            self._record(rels, [self._copy(rel) for rel in rels])

    def write(self, results: list[FileResult]) -> None:
        """Each converted file over its copy; a file the copy did not see is copied now."""
        if self._copying is not None:
            copying, rels = self._copying
            self._copying = None
            self._record(rels, copying.finish())
        for result in results:
            if result.path in self.failed:
                continue
            if result.path in self.copied:
                if result.new_bytes is not None:
                    self._record([result.path], [self._replace(result.path, result.new_bytes)])
            else:
                self._record([result.path], [self._copy(result.path, result.new_bytes)])

    def _record(self, rels: list[str], outcomes: list[str | None]) -> None:
        for rel, problem in zip(rels, outcomes):
            if problem:
                self.problems.append(problem)
                self.failed.add(rel)
                self.copied.discard(rel)
            else:
                self.copied.add(rel)

    def _copy(self, rel: str, data: bytes | None = None) -> str | None:
        """Write SRC's file `rel` (or `data` instead of its bytes) into OUT with SRC's mode;
        None, or what went wrong. It may run in a forked process: it changes nothing of this
        object but the directory cache."""
        if not self.dirs.ready(rel.rpartition("/")[0]):
            return f"{rel}: not written, its directory in OUT leads outside OUT"
        source, dest = f"{self.src}/{rel}", f"{self.out}/{rel}"  # strings: this runs for every file
        if not self.fresh and (os.path.islink(dest) or os.path.isdir(dest)):
            _remove(Path(dest))
        try:
            if data is None:
                shutil.copyfile(source, dest)
            else:
                with open(dest, "wb") as fh:
                    fh.write(data)
            mode = stat.S_IMODE(os.stat(source).st_mode)
            if mode != self.new_file_mode or not self.fresh:
                os.chmod(dest, mode)
            return None
        except OSError as exc:
            return f"{rel}: not written: {exc.strerror}"

    def _replace(self, rel: str, data: bytes) -> str | None:
        """New bytes into the copy made of `rel` (which already has its mode)."""
        if not self.dirs.ready(rel.rpartition("/")[0]):  # checked again here: never through a link
            return f"{rel}: not written, its directory in OUT leads outside OUT"
        try:
            with open(f"{self.out}/{rel}", "wb") as fh:
                fh.write(data)
            return None
        except OSError as exc:
            return f"{rel}: not written: {exc.strerror}"

    def links(self, symlinks: list[str]) -> None:
        for rel in symlinks:
            if not self.dirs.ready(rel.rpartition("/")[0]):
                self.problems.append(f"{rel}: not written, its directory in OUT leads outside OUT")
                continue
            dest = self.out / rel
            if dest.is_symlink() or dest.exists():
                _remove(dest)
            os.symlink(os.readlink(self.src / rel), dest)


def write_in_place(run: RunResult) -> list[str]:
    """Replace each changed file of SRC atomically, keeping its mode."""
    problems: list[str] = []
    for result in run.results:
        if result.new_bytes is None:
            continue
        path = run.src / result.path
        try:
            atomic_write(path, result.new_bytes)
        except OSError as exc:
            problems.append(f"{result.path}: not written: {exc.strerror}")
    return problems


def atomic_write(path: Path, data: bytes) -> None:
    """Replace one of the user's files: atomically, synced to disk, keeping its mode."""
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o644
    write_atomically(path, data, mode=mode, durable=True)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
