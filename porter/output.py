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
from pathlib import Path

from porter.runner import RunResult


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


def _inside(root: Path, path: Path) -> bool:
    real_root = root.resolve()
    real_parent = path.parent.resolve()
    return real_parent == real_root or real_root in real_parent.parents


def write_tree(run: RunResult, out: Path) -> list[str]:
    """Write OUT: converted files, copies of the rest, symlinks as links. Returns problems."""
    problems: list[str] = []
    out.mkdir(parents=True, exist_ok=True)
    for result in run.results:
        dest = out / result.path
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not _inside(out, dest):
            problems.append(f"{result.path}: not written, its directory in OUT leads outside OUT")
            continue
        if dest.is_symlink() or (dest.exists() and dest.is_dir()):
            _remove(dest)
        source = run.src / result.path
        try:
            if result.new_bytes is not None:
                dest.write_bytes(result.new_bytes)
                shutil.copymode(source, dest)
            else:
                shutil.copy2(source, dest, follow_symlinks=False)
        except OSError as exc:
            problems.append(f"{result.path}: not written: {exc.strerror}")
    for rel in run.symlinks:
        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.is_symlink() or dest.exists():
            _remove(dest)
        os.symlink(os.readlink(run.src / rel), dest)
    return problems


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
