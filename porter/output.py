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
from porter.parallel import fork_map
from porter.runner import RunResult


# Batches smaller than this are written by one process: forking costs more.
_SPREAD_WRITES = 64


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
        parent, _, name = rel_dir.rpartition("/")
        ok = self.ready(parent)
        if ok:
            path = self.out / rel_dir
            if path.is_symlink():
                ok = False
            elif not path.is_dir():
                if path.exists():
                    path.unlink()  # a file where SRC has a directory: SRC wins
                path.mkdir()
        self.known[rel_dir] = ok
        return ok


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
    `write_originals` writes files whose result is not known yet as they are, while the
    workers compute; `write` then rewrites only those that changed. A batch may be spread
    over `processes` forked processes: creating files is kernel work that two processes do
    in about two thirds of the time (threads do not help).
    """

    def __init__(self, src: Path, out: Path) -> None:
        self.src, self.out = src, out
        out.mkdir(parents=True, exist_ok=True)
        self.dirs = _Dirs(out)
        self.fresh = not any(out.iterdir())
        self.written: set[str] = set()  # final content written
        self.originals: dict[str, int] = {}  # written as in SRC, result pending: path -> mode
        self.problems: list[str] = []
        umask = os.umask(0)
        os.umask(umask)
        self.new_file_mode = 0o666 & ~umask

    def write(self, results: list[FileResult], sources: dict[str, tuple[bytes, int]] | None = None,
              processes: int = 1) -> None:
        sources = sources if sources is not None else {}
        puts: list[_Put] = []
        for result in results:
            if result.path in self.written:
                continue
            self.written.add(result.path)
            mode = self.originals.pop(result.path, None)
            if mode is not None:
                if result.new_bytes is not None:  # already there as in SRC: only a change is written
                    puts.append(_Put(result.path, result.new_bytes, mode, replacing=True))
                continue
            source = sources.pop(result.path, None)
            data = result.new_bytes if result.new_bytes is not None else source[0] if source else None
            puts.append(_Put(result.path, data, source[1] if source else None))
        self._write_all(puts, processes)

    def write_originals(self, paths: list[str], sources: dict[str, tuple[bytes, int]], processes: int = 1) -> None:
        """Write these files as they are in SRC; `write` replaces the ones that change."""
        puts = [_Put(rel, *sources.pop(rel)) for rel in paths
                if rel not in self.written and rel not in self.originals and rel in sources]
        for put in self._write_all(puts, processes):
            self.originals[put.rel] = put.mode  # type: ignore[assignment]

    def _write_all(self, puts: list[_Put], processes: int) -> list[_Put]:
        """Write a batch; returns the puts that were written."""
        ready = []
        for put in puts:  # directories first, here: _Dirs remembers what it checked
            if self.dirs.ready(put.rel.rpartition("/")[0]):
                ready.append(put)
            else:
                self.problems.append(f"{put.rel}: not written, its directory in OUT leads outside OUT")
        if len(ready) < _SPREAD_WRITES:
            processes = 1
        outcomes = fork_map(self._put, ready, processes)
        self.problems.extend(problem for problem in outcomes if problem)
        return [put for put, problem in zip(ready, outcomes) if not problem]

    def _put(self, put: _Put) -> str | None:
        """Write one file; None, or what went wrong. (It may run in a forked process: it
        changes nothing of this object.)"""
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
