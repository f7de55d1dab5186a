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
import tempfile
from dataclasses import dataclass
from pathlib import Path

from porter.model import FileResult
from porter.parallel import ForkedMap
from porter.runner import RunResult


# Batches smaller than this are written here and now: forking costs more.
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


@dataclass(frozen=True)
class _Put:
    """One file to write: `data` (None: copy it from SRC) with `mode` (None: SRC's)."""

    rel: str
    data: bytes | None
    mode: int | None
    replacing: bool = False  # over a file this run wrote itself


class TreeWriter:
    """Writes OUT in as many batches as come: converted files, copies of the rest, and
    symlinks as links. `problems` says what was not written.

    A file whose bytes were read already (`sources`: bytes and mode by path) is written from
    memory, and its entry dropped; others are copied. Modes are kept, times are not (as `cp`).
    `write_in_background` writes files as they are in SRC from a forked process while this
    one works out the results; `write` then helps with what is left of that, and writes
    only what changed.
    """

    def __init__(self, src: Path, out: Path, background: bool = True) -> None:
        self.src, self.out = src, out
        self.background = background  # False: every write in this process (--jobs 1)
        out.mkdir(parents=True, exist_ok=True)
        self.dirs = _Dirs(out)
        self.fresh = not any(out.iterdir())
        self.written: set[str] = set()  # final content written (or given up on)
        self.originals: dict[str, int] = {}  # written as in SRC, result pending: path -> mode
        self.problems: list[str] = []
        self._background: tuple[ForkedMap, list[_Put]] | None = None
        umask = os.umask(0)
        os.umask(umask)
        self.new_file_mode = 0o666 & ~umask

    def write_in_background(self, final: list[FileResult], pending: list[str],
                            sources: dict[str, tuple[bytes, int]]) -> None:
        """Write the files of `final` (results that copy SRC) and of `pending` (results still
        to come) as they are in SRC, beside this process's work."""
        self._join()
        puts = []
        for rel in [r.path for r in final if r.new_bytes is None] + pending:
            if rel in self.written or rel in self.originals:
                continue
            source = sources.pop(rel, None)
            put = _Put(rel, source[0] if source else None, source[1] if source else None)
            if rel in pending:
                self.originals[rel] = put.mode if put.mode is not None else -1
            else:
                self.written.add(rel)
            puts.append(put)
        if len(puts) < _BACKGROUND_WRITES or not self.background:
            self._record(puts, [self._put(put) for put in puts])
        else:
            # A forked writer starts now; this process joins it when it calls `write`.
            self._background = ForkedMap(self._put, puts, jobs=2), puts

    def write(self, results: list[FileResult], sources: dict[str, tuple[bytes, int]] | None = None) -> None:
        self._join()
        sources = sources if sources is not None else {}
        puts: list[_Put] = []
        for result in results:
            if result.path in self.written:
                continue
            self.written.add(result.path)
            mode = self.originals.pop(result.path, None)
            if mode is not None:
                if result.new_bytes is not None:  # already there as in SRC: only a change is written
                    puts.append(_Put(result.path, result.new_bytes, None if mode < 0 else mode, replacing=True))
                continue
            source = sources.pop(result.path, None)
            data = result.new_bytes if result.new_bytes is not None else source[0] if source else None
            puts.append(_Put(result.path, data, source[1] if source else None))
        self._record(puts, [self._put(put) for put in puts])

    def _join(self) -> None:
        if self._background is not None:
            background, puts = self._background
            self._background = None
            self._record(puts, background.finish())

    def _record(self, puts: list[_Put], outcomes: list[str | None]) -> None:
        for put, problem in zip(puts, outcomes):
            if problem:  # given up on: not retried when its result comes
                self.problems.append(problem)
                self.originals.pop(put.rel, None)
                self.written.add(put.rel)

    def _put(self, put: _Put) -> str | None:
        """Write one file; None, or what went wrong. (It may run in a forked process: it
        changes nothing of this object but the directory cache.)"""
        if not self.dirs.ready(put.rel.rpartition("/")[0]):
            return f"{put.rel}: not written, its directory in OUT leads outside OUT"
        dest = f"{self.out}/{put.rel}"  # a string: this runs for every file of the tree
        if not self.fresh and not put.replacing and (os.path.islink(dest) or os.path.isdir(dest)):
            _remove(Path(dest))
        try:
            if put.data is None:
                shutil.copy(f"{self.src}/{put.rel}", dest, follow_symlinks=False)
                return None
            with open(dest, "wb") as fh:
                fh.write(put.data)
            mode = stat.S_IMODE(put.mode if put.mode is not None else os.stat(f"{self.src}/{put.rel}").st_mode)
            if mode != self.new_file_mode or not self.fresh:
                os.chmod(dest, mode)
            return None
        except OSError as exc:
            return f"{put.rel}: not written: {exc.strerror}"

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
    """Write through a temporary file in the same directory, then rename over `path`."""
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".porter-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
