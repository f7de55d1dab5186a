"""A cache that cannot be written (a full disk, an unwritable cache directory) costs time,
never the run: at most one warning, and the result a run with --no-cache gives."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from porter.core import cache_writes

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "cuda_trainer"
WARNING = "porter: warning: cache not written"

# Runs porter with every creation of a file or folder under CACHE, and every write to a file
# there, failing as on a full disk (os.open, os.mkdir, os.write: porter's own writes, jinja's
# temporary files and the folders of both).
_FULL_DISK = """
import errno, os, sys
cache = os.path.realpath(sys.argv[1])

def _where(path, dir_fd):
    path = os.fsdecode(path)
    if not os.path.isabs(path) and dir_fd is not None:
        path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), path)
    return os.path.realpath(path)

def _full(path):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)

real_open, real_write, real_mkdir = os.open, os.write, os.mkdir

def fake_open(path, flags, mode=0o777, *, dir_fd=None):
    if flags & os.O_CREAT and _where(path, dir_fd).startswith(cache):
        _full(path)
    return real_open(path, flags, mode, dir_fd=dir_fd)

def fake_write(fd, data):
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        target = ""
    if target.startswith(cache):
        _full(target)
    return real_write(fd, data)

def fake_mkdir(path, mode=0o777, *, dir_fd=None):
    if _where(path, dir_fd).startswith(cache):
        _full(path)
    return real_mkdir(path, mode, dir_fd=dir_fd)

os.open, os.write, os.mkdir = fake_open, fake_write, fake_mkdir
from porter.cli import main
main(sys.argv[2:])
"""


def _porter(*args: str, cache: Path, full: bool = False, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "NO_COLOR": "1"}
    if full:
        driver = cwd / "full_disk.py"
        driver.write_text(_FULL_DISK)
        command = [sys.executable, str(driver), str(cache), *args]
    else:
        command = [sys.executable, "-m", "porter", *args]
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def _tree(out: Path) -> dict[str, bytes]:
    files = {}
    for path in sorted(out.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            if path.name == "report.json":  # names OUT, which differs
                report = json.loads(data)
                report.pop("output", None)
                data = json.dumps(report, sort_keys=True).encode()
            files[path.relative_to(out).as_posix()] = data
    return files


def _same_as_no_cache(tmp_path: Path, cache: Path, full: bool) -> None:
    src = tmp_path / "src"
    shutil.copytree(EXAMPLE, src)
    plain = _porter(
        "convert", "src", "--target", "mlu", "-o", "plain", "--no-cache", cache=tmp_path / "unused", cwd=tmp_path
    )
    assert plain.returncode == 0, plain.stderr
    for attempt in ("first", "again"):  # a second run must not find half of anything either
        run = _porter("convert", "src", "--target", "mlu", "-o", attempt, cache=cache, full=full, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        assert run.stderr.count(WARNING) == 1, run.stderr
        assert "error" not in run.stderr.lower(), run.stderr
        assert _tree(tmp_path / attempt) == _tree(tmp_path / "plain")
    checked = _porter("check", "src", "--target", "mlu", "--format", "json", cache=cache, full=full, cwd=tmp_path)
    unchecked = _porter("check", "src", "--target", "mlu", "--format", "json", "--no-cache", cache=cache, cwd=tmp_path)
    assert (checked.returncode, checked.stdout) == (unchecked.returncode, unchecked.stdout)
    assert checked.stderr.count(WARNING) == 1, checked.stderr


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="the simulated full disk reads /proc/self/fd")
@pytest.mark.parametrize("folders", [False, True], ids=["empty-cache", "cache-folders-made"])
def test_full_disk_under_the_cache(tmp_path, folders):
    cache = tmp_path / "cache"
    cache.mkdir()
    if folders:  # the folders of an earlier run are there, only new files fail (jinja's stopped the run)
        warm = _porter(
            "convert", str(EXAMPLE), "--target", "mlu", "-o", str(tmp_path / "warm"), cache=cache, cwd=tmp_path
        )
        assert warm.returncode == 0, warm.stderr
        for path in cache.rglob("*"):
            if path.is_file():
                path.unlink()
        assert (cache / "porter" / "jinja").is_dir()
    _same_as_no_cache(tmp_path, cache, full=True)


def test_cache_directory_that_cannot_be_made(tmp_path):
    (tmp_path / "a-file").write_text("")
    _same_as_no_cache(tmp_path, tmp_path / "a-file" / "cache", full=False)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_read_only_cache_directory(tmp_path):
    cache = tmp_path / "cache"
    (cache / "porter").mkdir(parents=True)
    (cache / "porter").chmod(0o500)
    try:
        _same_as_no_cache(tmp_path, cache, full=False)
    finally:
        (cache / "porter").chmod(0o700)


def test_one_warning_and_no_more_tries_in_a_failed_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cache_writes, "_failed", {})
    monkeypatch.setattr(cache_writes, "_warned", [False])
    tries = []

    def full():
        tries.append(1)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "a" / "x.json"))

    assert not cache_writes.cache_write(tmp_path / "a", full)
    assert not cache_writes.cache_write(tmp_path / "a", full)  # not tried again
    assert not cache_writes.cache_write(tmp_path / "b", full)  # tried, not said again
    assert cache_writes.cache_write(tmp_path / "c", lambda: None)
    assert len(tries) == 2
    err = capsys.readouterr().err
    assert err.count(WARNING) == 1 and "No space left on device" in err
