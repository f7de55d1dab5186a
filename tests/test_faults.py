"""Issue 16: never write outside OUT, never lose a file, never crash.

Each case builds a hostile tree in a temporary folder (or injects a fault: a small file-size
limit in a subprocess, a monkeypatched write) and checks what the user relies on: nothing
written outside OUT (or the report folder), SRC byte-identical unless --in-place, an exit
code and a one-line message instead of a traceback, and every file of SRC either in OUT or
listed in the report with a reason. porter runs as root in some environments, where file
modes do not stop anything: permission faults are injected, not made with chmod.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from porter.cli import main

ROOT = Path(__file__).resolve().parents[1]
CUDA = "import torch\n\n\ndef f(x):\n    return x.cuda()\n"


def _porter(*args: str, env: dict | None = None, limit_bytes: int | None = None, cwd: Path | None = None):
    """porter in its own process: (exit code, stdout, stderr)."""

    def limits() -> None:
        if limit_bytes is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    full_env = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    proc = subprocess.run(
        [sys.executable, "-m", "porter", *args],
        capture_output=True,
        env=full_env,
        preexec_fn=limits,
        cwd=cwd,
        timeout=300,
    )
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _repo(tmp_path: Path, name: str = "repo") -> Path:
    src = tmp_path / name
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "a.py").write_text(CUDA)
    (src / "plain.txt").write_text("hello\n")
    return src


def _snapshot(root: Path, skip: tuple[Path, ...] = ()) -> dict[str, tuple]:
    """Everything under `root` (not following links): type, mode and content."""
    found: dict[str, tuple] = {}
    skip_s = {str(p) for p in skip}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if os.path.join(folder, d) not in skip_s]
        for name in dirs + files:
            path = os.path.join(folder, name)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                found[path] = ("link", os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as fh:
                    found[path] = ("file", stat.S_IMODE(st.st_mode), fh.read())
            elif stat.S_ISDIR(st.st_mode):
                found[path] = ("dir", stat.S_IMODE(st.st_mode))
            else:
                found[path] = ("special",)
    return found


def _report(folder: Path) -> dict:
    return json.loads((folder / "report.json").read_text(encoding="utf-8"))


def _one_line_error(err: str) -> str:
    """The error line of a failed run; asserts there is no traceback."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines, "no message"
    return lines[-1]


# --- 1. symlinked porter_report / porter_lora: refused, never written through -------------


@pytest.mark.parametrize("name", ["porter_report", "porter_lora"])
@pytest.mark.parametrize("to", ["outside", "into_src"])
def test_symlinked_output_folder_in_src_is_refused(tmp_path, name, to):
    src = _repo(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (src / name).symlink_to(elsewhere if to == "outside" else src / "pkg", target_is_directory=True)
    before = _snapshot(tmp_path)
    code, out, err = _porter("convert", str(src), "--target", "mlu", "-o", str(tmp_path / "out"))
    assert code == 2
    assert str(src / name) in _one_line_error(err) and "symbolic link" in err
    after = _snapshot(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith(str(tmp_path / "out"))} == before


def test_symlinked_output_folder_in_src_with_report_dir_is_copied_as_a_link(tmp_path):
    src = _repo(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (src / "porter_report").symlink_to(elsewhere, target_is_directory=True)
    out, reports = tmp_path / "out", tmp_path / "reports"
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out), "--report-dir", str(reports))
    assert code == 0, err
    assert (out / "porter_report").is_symlink() and not list(elsewhere.iterdir())
    assert _report(reports)["summary"]["files_changed"] == 1
    assert (reports / "porter_lora" / "train_lora.py").is_file()


@pytest.mark.parametrize("name", ["porter_report", "porter_lora"])
def test_force_into_out_with_a_symlinked_output_folder_is_refused(tmp_path, name):
    src = _repo(tmp_path)
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    out.mkdir()
    (out / name).symlink_to(elsewhere, target_is_directory=True)
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out), "--force")
    assert code == 2 and str(out / name) in _one_line_error(err)
    assert not list(elsewhere.iterdir())


def test_write_beneath_never_follows_a_link(tmp_path):
    from porter.core.files import LinkRefused, write_beneath

    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    (root / "a").mkdir(parents=True)
    elsewhere.mkdir()
    (root / "a" / "b").symlink_to(elsewhere, target_is_directory=True)
    (root / "a" / "f.txt").symlink_to(elsewhere / "f.txt")
    with pytest.raises(LinkRefused) as caught:
        write_beneath(root, "a/b/c/x.txt", b"x")
    assert caught.value.filename == f"{root}/a/b"
    with pytest.raises(LinkRefused):
        write_beneath(root, "a/f.txt", b"x")
    with pytest.raises(OSError):
        write_beneath(root, "../x.txt", b"x")
    assert not list(elsewhere.iterdir())
    assert write_beneath(root, "a/new/x.txt", b"x").read_bytes() == b"x"
    assert not [p for p in root.rglob("*") if p.name.endswith(".porter-tmp")]


def test_write_beneath_does_not_write_through_a_hard_link(tmp_path):
    from porter.core.files import write_beneath

    (tmp_path / "root").mkdir()
    (tmp_path / "theirs.txt").write_bytes(b"theirs")
    os.link(tmp_path / "theirs.txt", tmp_path / "root" / "r.txt")
    write_beneath(tmp_path / "root", "r.txt", b"ours")
    assert (tmp_path / "theirs.txt").read_bytes() == b"theirs"
    assert (tmp_path / "root" / "r.txt").read_bytes() == b"ours"


def test_cache_entries_are_never_written_through_a_link(tmp_path):
    from porter.engine.cache import ResultCache

    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    cache.mkdir()
    elsewhere.mkdir()
    key = "ab" + "0" * 62
    (cache / "ab").symlink_to(elsewhere, target_is_directory=True)
    (cache / "packs").symlink_to(elsewhere, target_is_directory=True)
    rc = ResultCache(cache, encode=lambda v: {"v": v}, decode=lambda d: d["v"])
    rc.put(key, 1)  # a cache that cannot be written only costs time: no error
    rc.put_many("ctx", {key: 1})
    assert not list(elsewhere.iterdir())


def test_lora_command_refuses_a_symlinked_porter_lora(tmp_path):
    tree, elsewhere = _repo(tmp_path), tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tree / "porter_lora").symlink_to(elsewhere, target_is_directory=True)
    code, _, err = _porter("lora", str(tree), "--target", "mlu")
    assert code == 2 and str(tree / "porter_lora") in _one_line_error(err)
    assert not list(elsewhere.iterdir())


# --- 2. the user's own porter_report / porter_lora ------------------------------------------


@pytest.mark.parametrize("name", ["porter_report", "porter_lora"])
@pytest.mark.parametrize("as_file", [True, False])
def test_users_porter_folder_is_refused_then_kept_with_report_dir(tmp_path, name, as_file):
    src = _repo(tmp_path)
    if as_file:
        (src / name).write_text("my notes\n")
    else:
        (src / name).mkdir()
        (src / name / "notes.md").write_text("mine\n")
        (src / name / "report.json").write_text('{"mine": true}\n')
    before = _snapshot(src)
    out = tmp_path / "out"
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out))
    assert code == 2
    line = _one_line_error(err)
    assert str(src / name) in line and "--report-dir" in line
    code, stdout, err = _porter(
        "convert", str(src), "--target", "mlu", "-o", str(out), "--force", "--report-dir", str(tmp_path / "rep")
    )
    assert code == 0, err
    assert _snapshot(src) == before
    if as_file:
        assert (out / name).read_text() == "my notes\n"
    else:
        assert (out / name / "notes.md").read_text() == "mine\n"
        assert (out / name / "report.json").read_text() == '{"mine": true}\n'
    assert _report(tmp_path / "rep")["summary"]["files_changed"] == 1
    assert str(tmp_path / "rep") in stdout


def test_in_place_leaves_no_report_in_src_and_keeps_the_users_folders(tmp_path):
    src = _repo(tmp_path)
    (src / "porter_report").mkdir()
    (src / "porter_report" / "report.md").write_text("the user's\n")
    (src / "porter_lora").write_text("also the user's\n")
    code, stdout, err = _porter("convert", str(src), "--target", "mlu", "--in-place")
    assert code == 0, err
    assert (src / "porter_report" / "report.md").read_text() == "the user's\n"
    assert sorted(p.name for p in (src / "porter_report").iterdir()) == ["report.md"]
    assert (src / "porter_lora").read_text() == "also the user's\n"
    sibling = tmp_path / "repo_porter_report"
    assert str(sibling) in stdout
    assert _report(sibling)["summary"]["files_changed"] == 1
    assert (sibling / "porter_lora" / "train_lora.py").is_file()
    assert "x.mlu()" in (src / "pkg" / "a.py").read_text()
    # A re-run writes its report over porter's own report there.
    code, _, err = _porter("convert", str(src), "--target", "mlu", "--in-place")
    assert code == 0, err


def test_report_dir_inside_src_or_over_users_files_is_refused(tmp_path):
    src = _repo(tmp_path)
    code, _, err = _porter(
        "convert", str(src), "--target", "mlu", "-o", str(tmp_path / "o"), "--report-dir", str(src / "rep")
    )
    assert code == 2 and "inside the source tree" in _one_line_error(err)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "report.md").write_text("not porter's\n")
    code, _, err = _porter(
        "convert", str(src), "--target", "mlu", "-o", str(tmp_path / "o2"), "--report-dir", str(theirs)
    )
    assert code == 2 and str(theirs / "report.md") in _one_line_error(err)
    assert (theirs / "report.md").read_text() == "not porter's\n"
    assert not (src / "rep").exists()


def test_in_place_report_folder_that_cannot_be_made_stops_before_src_is_rewritten(tmp_path, monkeypatch):
    src = _repo(tmp_path)
    real_makedirs = os.makedirs

    def makedirs(path, *args, **kwargs):
        if os.fspath(path).endswith("repo_porter_report"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return real_makedirs(path, *args, **kwargs)

    monkeypatch.setattr(os, "makedirs", makedirs)
    result = _run("convert", str(src), "--target", "mlu", "--in-place", "--no-cache")
    assert result.exit_code == 2
    assert f"{tmp_path / 'repo_porter_report'}: Permission denied" in result.output
    assert (src / "pkg" / "a.py").read_text() == CUDA


def test_in_place_report_beside_src_that_is_a_file_is_refused(tmp_path):
    src = _repo(tmp_path)
    (tmp_path / "repo_porter_report").write_text("mine\n")
    code, _, err = _porter("convert", str(src), "--target", "mlu", "--in-place")
    assert code == 2 and str(tmp_path / "repo_porter_report") in _one_line_error(err)
    assert (src / "pkg" / "a.py").read_text() == CUDA
    assert (tmp_path / "repo_porter_report").read_text() == "mine\n"


def test_report_folder_of_a_killed_run_is_written_over(tmp_path):
    src, rep = _repo(tmp_path), tmp_path / "rep"
    rep.mkdir()
    (rep / "changes.patch").write_bytes(b"diff --git a/x b/x\n")  # a run killed before report.json
    (rep / "report.md").write_text("# porter report: x\n")
    code, _, err = _porter("convert", str(src), "--target", "mlu", "--in-place", "--report-dir", str(rep))
    assert code == 0, err
    assert _report(rep)["summary"]["files_changed"] == 1


def test_lora_folder_of_a_killed_run_is_written_over_and_its_temporaries_removed(tmp_path):
    src, rep = _repo(tmp_path), tmp_path / "rep"
    assert _porter("convert", str(src), "--target", "mlu", "-o", str(tmp_path / "o"), "--report-dir", str(rep))[0] == 0
    dead = _dead_pid()
    (rep / "porter_lora" / "run_lora.sh").unlink()
    (rep / "porter_lora" / f".run_lora.sh.{dead}.porter-tmp").write_text("half")
    (rep / f".report.md.{dead}.porter-tmp").write_text("half")
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(tmp_path / "o2"), "--report-dir", str(rep))
    assert code == 0, err
    assert (rep / "porter_lora" / "run_lora.sh").is_file()
    assert not [p for p in rep.rglob("*") if p.name.endswith(".porter-tmp")]


def test_src_path_that_is_not_utf8(tmp_path):
    src = tmp_path / os.fsdecode(b"r\xe9po")
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "a.py").write_text(CUDA)
    code, stdout, err = _porter("convert", str(src), "--target", "mlu")
    assert code == 0, err
    assert "x.mlu()" in (tmp_path / os.fsdecode(b"r\xe9po_mlu") / "pkg" / "a.py").read_text()


def test_converting_an_output_again_lists_porters_old_outputs(tmp_path):
    src = _repo(tmp_path)
    out = tmp_path / "out"
    assert _porter("convert", str(src), "--target", "mlu", "-o", str(out))[0] == 0
    code, _, err = _porter("convert", str(out), "--target", "mlu", "-o", str(tmp_path / "again"))
    assert code == 0, err
    files = {f["path"]: f for f in _report(tmp_path / "again" / "porter_report")["files"]}
    assert files["porter_report"]["status"] == "skipped" and "earlier run" in files["porter_report"]["reason"]
    assert files["porter_lora"]["status"] == "skipped"


# --- 3. one line and exit 2, never a traceback --------------------------------------------


def test_out_that_is_a_file_with_force(tmp_path):
    src = _repo(tmp_path)
    (tmp_path / "out").write_text("a file\n")
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(tmp_path / "out"), "--force")
    line = _one_line_error(err)
    assert code == 2 and str(tmp_path / "out") in line and "not a folder" in line
    assert (tmp_path / "out").read_text() == "a file\n"


def test_out_whose_parent_is_a_file(tmp_path):
    src = _repo(tmp_path)
    (tmp_path / "f").write_text("a file\n")
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(tmp_path / "f" / "out"))
    line = _one_line_error(err)
    assert code == 2 and str(tmp_path / "f") in line and "Not a directory" in line


def test_out_whose_parent_is_read_only(tmp_path, monkeypatch):
    src = _repo(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir()
    real_mkdir = os.mkdir

    def mkdir(path, *args, **kwargs):
        if os.fspath(path).startswith(str(locked)):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", mkdir)
    result = CliRunner().invoke(main, ["convert", str(src), "--target", "mlu", "-o", str(locked / "out")])
    assert result.exit_code == 2
    assert f"{locked / 'out'}: Permission denied" in result.output


def test_disk_full_while_writing_the_report(tmp_path, monkeypatch):
    from porter.core import files

    src, out = _repo(tmp_path), tmp_path / "out"

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files, "_write_fd", full)
    result = _run("convert", str(src), "--target", "mlu", "-o", str(out), "--no-cache")
    assert result.exit_code == 2
    line = result.output.strip().splitlines()[-1]
    assert "porter_report/changes.patch: No space left on device" in line
    assert "report in" not in result.output  # no report presented as complete
    assert not (out / "porter_report" / "report.json").exists()
    assert not [p for p in out.rglob("*") if p.name.endswith(".porter-tmp")]


def test_disk_full_with_force_leaves_no_earlier_report_json(tmp_path, monkeypatch):
    from porter.core import files

    src, out = _repo(tmp_path), tmp_path / "out"
    assert _run("convert", str(src), "--target", "mlu", "-o", str(out)).exit_code == 0
    real = files._write_fd

    def full(fd, data):
        if b"<html" in data[:200]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr(files, "_write_fd", full)
    result = _run("convert", str(src), "--target", "mlu", "-o", str(out), "--force", "--no-cache")
    assert result.exit_code == 2
    assert "report.html: No space left on device" in result.output.strip().splitlines()[-1]
    assert not (out / "porter_report" / "report.json").exists()  # the old one is not presented as this run's


def test_disk_full_while_copying_a_file(tmp_path, monkeypatch):
    from porter.engine import output

    src, out = _repo(tmp_path), tmp_path / "out"
    real_copy = output.copy_new_file

    def copy_new_file(a, b, *args, **kwargs):
        if a.endswith("plain.txt"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_copy(a, b, *args, **kwargs)

    monkeypatch.setattr(output, "copy_new_file", copy_new_file)
    result = _run("convert", str(src), "--target", "mlu", "-o", str(out), "--jobs", "1")
    assert result.exit_code == 2
    assert "failed: plain.txt: not written: No space left on device" in result.output
    files = {f["path"]: f for f in _report(out / "porter_report")["files"]}
    assert files["plain.txt"]["status"] == "failed"
    assert _report(out / "porter_report")["summary"]["files_failed"] == 1


def test_file_size_limit_while_writing(tmp_path):
    src = _repo(tmp_path)
    (src / "big.bin").write_bytes(os.urandom(300_000))
    code, _, err = _porter(
        "convert", str(src), "--target", "mlu", "-o", str(tmp_path / "out"), "--no-cache", limit_bytes=200_000
    )
    assert code == 2
    assert "big.bin: not written: File too large" in err
    _one_line_error(err)


def test_file_size_limit_while_writing_the_report(tmp_path):
    src = _repo(tmp_path)
    code, _, err = _porter(
        "convert", str(src), "--target", "mlu", "-o", str(tmp_path / "out"), "--no-cache", limit_bytes=2_000
    )
    assert code == 2
    line = _one_line_error(err)
    assert "porter_report/" in line and "File too large" in line
    assert not (tmp_path / "out" / "porter_report" / "report.json").exists()


def test_report_output_into_a_missing_folder(tmp_path):
    src, out = _repo(tmp_path), tmp_path / "out"
    assert _porter("convert", str(src), "--target", "mlu", "-o", str(out))[0] == 0
    code, _, err = _porter("report", str(out), "--format", "md", "-o", str(tmp_path / "missing" / "r.md"))
    assert code == 2 and str(tmp_path / "missing" / "r.md") in _one_line_error(err)


def test_lora_onto_a_file(tmp_path):
    tree = _repo(tmp_path)
    (tmp_path / "file").write_text("x\n")
    code, _, err = _porter("lora", str(tree), "--target", "mlu", "-o", str(tmp_path / "file"))
    assert code == 2 and str(tmp_path / "file") in _one_line_error(err)
    assert (tmp_path / "file").read_text() == "x\n"


# --- 4. unreadable and special files: reported, counted, not dropped ----------------------


def test_unreadable_file_is_reported_failed(tmp_path, monkeypatch):
    from porter.engine import runner

    src, out = _repo(tmp_path), tmp_path / "out"
    real = runner.read_source

    def read_source(root, rel, *args):
        if rel == "pkg/a.py":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        return real(root, rel, *args)

    monkeypatch.setattr(runner, "read_source", read_source)
    real_bytes = runner.Task.bytes

    def task_bytes(task):  # a first run reads a file where it is converted
        if task.rel == "pkg/a.py":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        return real_bytes(task)

    monkeypatch.setattr(runner.Task, "bytes", task_bytes)
    from porter.engine import output

    real_copy = output.copy_new_file

    def copy_new_file(a, b, *args, **kwargs):  # not root: the copy cannot read it either
        if a.endswith("pkg/a.py"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), a)
        return real_copy(a, b, *args, **kwargs)

    monkeypatch.setattr(output, "copy_new_file", copy_new_file)
    result = _run("convert", str(src), "--target", "mlu", "-o", str(out), "--jobs", "1", "--no-cache")
    assert result.exit_code == 1
    report = _report(out / "porter_report")
    files = {f["path"]: f for f in report["files"]}
    assert files["pkg/a.py"] == {
        "path": "pkg/a.py",
        "kind": "other",
        "status": "failed",
        "reason": "cannot read: Permission denied",
    }
    assert report["summary"]["files_failed"] == 1


def test_unreadable_folder_is_reported_failed(tmp_path, monkeypatch):
    from porter.core import tree

    src, out = _repo(tmp_path), tmp_path / "out"
    (src / "secret").mkdir()
    (src / "secret" / "s.py").write_text(CUDA)
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path) == str(src / "secret"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return real(path)

    monkeypatch.setattr(tree.os, "scandir", scandir)
    result = _run("convert", str(src), "--target", "mlu", "-o", str(out), "--jobs", "1", "--no-cache")
    assert result.exit_code == 1
    report = _report(out / "porter_report")
    files = {f["path"]: f for f in report["files"]}
    assert files["secret"]["status"] == "failed"
    assert files["secret"]["reason"] == "cannot read folder: Permission denied"
    assert report["summary"]["files_failed"] == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file of mode 000")
def test_unreadable_file_by_mode(tmp_path):
    src, out = _repo(tmp_path), tmp_path / "out"
    os.chmod(src / "pkg" / "a.py", 0)
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out))
    assert code in (1, 2)
    assert {f["path"]: f["status"] for f in _report(out / "porter_report")["files"]}["pkg/a.py"] == "failed"


def test_named_pipe_is_reported_skipped(tmp_path):
    src, out = _repo(tmp_path), tmp_path / "out"
    os.mkfifo(src / "pkg" / "queue.py")
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out))
    assert code == 0, err
    files = {f["path"]: f for f in _report(out / "porter_report")["files"]}
    assert files["pkg/queue.py"]["status"] == "skipped"
    assert "named pipe" in files["pkg/queue.py"]["reason"]
    assert not os.path.lexists(out / "pkg" / "queue.py")


# --- 5 and 6. odd file names: OUT, the patch (git apply), report.json, the HTML -----------

ODD_NAMES = [
    "sp ace.py",
    "ta\tb.py",
    "new\nline.py",
    'q"uote.py',
    "-dash.py",
    "back\\slash.py",
    "it's.py",
    os.fsdecode(b"caf\xe9.py"),
    os.fsdecode(b"\xff\x80 raw.py"),
]


def test_odd_names_round_trip_and_the_patch_applies(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    for name in ODD_NAMES:
        (src / name).write_text(CUDA)
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out))
    assert code == 0, err
    for name in ODD_NAMES:
        assert "x.mlu()" in (out / name).read_text(), name
    report = _report(out / "porter_report")
    assert {f["path"] for f in report["files"] if f["status"] == "changed"} == set(ODD_NAMES)
    raw = (out / "porter_report" / "report.json").read_bytes()
    raw.decode("utf-8")  # valid UTF-8: the names that are not are escaped
    html = (out / "porter_report" / "report.html").read_bytes().decode("utf-8")
    assert "caf\\udce9.py" in html
    copy = tmp_path / "copy"
    shutil.copytree(src, copy)
    subprocess.run(
        ["git", "apply", "--unsafe-paths", str(out / "porter_report" / "changes.patch")],
        cwd=copy,
        check=True,
        capture_output=True,
    )
    for name in ODD_NAMES:
        assert (copy / name).read_bytes() == (out / name).read_bytes(), name


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_check_formats_with_a_name_that_is_not_utf8(tmp_path, fmt):
    src = tmp_path / "src"
    src.mkdir()
    (src / os.fsdecode(b"caf\xe9.py")).write_text(CUDA)
    code, stdout, err = _porter("check", str(src), "--target", "mlu", "--format", fmt)
    assert code == 0 and "Traceback" not in err and "internal error" not in err, err
    if fmt in ("json", "sarif"):
        json.loads(stdout)
    code, _, err = _porter("check", str(src), "--target", "mlu", "--write-baseline", str(tmp_path / "b.json"))
    assert code == 0, err
    code, stdout, err = _porter("check", str(src), "--target", "mlu", "--baseline", str(tmp_path / "b.json"))
    assert code == 0 and "2 accepted by the baseline" in stdout, err


def test_quote_path_as_git():
    from porter.core.patch import file_diff, quote_path

    assert quote_path(b"a/", "plain-name.py") == b"a/plain-name.py"
    assert quote_path(b"a/", 't\tn\n"\\.py') == b'"a/t\\tn\\n\\"\\\\.py"'
    assert quote_path(b"a/", os.fsdecode(b"\xe9.py")) == b'"a/\\351.py"'
    assert file_diff("sp ace.py", b"a\n", b"b\n").splitlines()[1] == b"--- a/sp ace.py\t"


# --- 7. --format github: a crafted name cannot inject a second command --------------------


def test_github_format_escapes_crafted_names(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ["a%0A::error::x,y:z.py", "n\n::error file=evil::pwn.py", "r\r::warning::w.py"]:
        (src / name).write_text(CUDA)
    code, stdout, err = _porter("check", str(src), "--target", "mlu", "--format", "github")
    assert "Traceback" not in err
    commands = [line for line in stdout.split("\n") if line.startswith("::")]
    assert len(commands) == 6  # two findings per file, one line each
    for line in commands:
        assert "\r" not in line
        props, _, _ = line[2:].partition("::")
        assert props.split(" ", 1)[0] in ("warning", "notice")
        file_prop = props.split(" ", 1)[1].split(",line=")[0]
        assert ":" not in file_prop.removeprefix("file=") and "," not in file_prop


def test_github_escaping_rules():
    from porter.checker.github import escape_data, escape_property

    assert escape_data("100%\r\nx") == "100%25%0D%0Ax"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


# --- 8. the cache is never trusted ----------------------------------------------------------


def test_cached_result_naming_another_path_is_recomputed():
    from porter.core.model import FileResult
    from porter.engine.cache import cached_map

    class Poisoned:
        def get_many(self, context, keys):
            return [FileResult("../../outside.py", "changed", new_bytes=b"evil")]

        def put_many(self, context, results):
            pass

    got = cached_map(
        lambda t: FileResult(t, "unchanged"), ["a.py"], ["k"], lambda t: 1, 1, Poisoned(), path_of=lambda t: t
    )
    assert got == [FileResult("a.py", "unchanged")]


def test_tree_writer_refuses_paths_outside_out(tmp_path):
    from porter.core.model import FileResult
    from porter.engine.output import TreeWriter

    src, out = _repo(tmp_path), tmp_path / "out"
    writer = TreeWriter(src, out, background=False)
    writer.start_copy()
    writer.write([FileResult("../escaped.py", "changed", new_bytes=b"evil")])
    assert not (tmp_path / "escaped.py").exists()
    assert "../escaped.py" in writer.failures


@pytest.mark.parametrize("entry", [b"{}", b"[]", b"null", b'{"rule": []}', b'{"key": 1}\n{}'])
def test_malformed_parsed_toml_in_the_user_cache_is_recomputed(tmp_path, entry):
    import hashlib

    cache = tmp_path / "xdg"
    for toml in (ROOT / "rules").rglob("*.toml"):
        path = cache / "porter" / "toml" / f"{hashlib.sha256(toml.read_bytes()).hexdigest()}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(entry)
    src = _repo(tmp_path)
    code, stdout, err = _porter(
        "convert", str(src), "--target", "mlu", "-o", str(tmp_path / "out"), env={"XDG_CACHE_HOME": str(cache)}
    )
    assert code == 0, err
    assert _report(tmp_path / "out" / "porter_report")["summary"]["files_changed"] == 1


# --- 9. --jobs ----------------------------------------------------------------------------


def test_jobs_zero_is_all_cores_and_negative_is_refused(tmp_path):
    src = _repo(tmp_path)
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(tmp_path / "o"), "--jobs", "-1")
    assert code == 2 and "--jobs" in _one_line_error(err)
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(tmp_path / "o"), "--jobs", "0")
    assert code == 0, err


# --- 10. folder modes ------------------------------------------------------------------------


def test_folder_modes_are_kept(tmp_path):
    src, out = _repo(tmp_path), tmp_path / "out"
    (src / "private").mkdir()
    (src / "private" / "p.py").write_text(CUDA)
    (src / "ro").mkdir()
    (src / "ro" / "r.py").write_text(CUDA)
    os.chmod(src / "private", 0o700)
    os.chmod(src / "ro", 0o555)
    try:
        code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out))
        assert code == 0, err
        assert stat.S_IMODE(os.stat(out / "private").st_mode) == 0o700
        assert stat.S_IMODE(os.stat(out / "ro").st_mode) == 0o555
        assert "x.mlu()" in (out / "ro" / "r.py").read_text()
    finally:
        os.chmod(src / "ro", 0o755)
        if out.exists():
            os.chmod(out / "ro", 0o755)


# --- 11. a file that cannot be written is a failure, never "changed" ----------------------


def test_hard_linked_out_with_force_leaves_src_intact(tmp_path):
    src, out = _repo(tmp_path), tmp_path / "out"
    (out / "pkg").mkdir(parents=True)
    os.link(src / "pkg" / "a.py", out / "pkg" / "a.py")
    os.link(src / "plain.txt", out / "plain.txt")
    before = _snapshot(src)
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out), "--force")
    assert code == 0, err
    assert _snapshot(src) == before
    assert "x.mlu()" in (out / "pkg" / "a.py").read_text()


def test_in_place_write_refused_is_a_failure(tmp_path, monkeypatch):
    from porter.engine import output

    src = _repo(tmp_path)

    def refuse(path, data, *args):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

    monkeypatch.setattr(output, "atomic_write", refuse)
    result = _run("convert", str(src), "--target", "mlu", "--in-place", "--no-cache")
    assert result.exit_code == 2
    assert "0 changed" in result.output and "1 failed" in result.output
    assert "failed: pkg/a.py: not written: Permission denied" in result.output
    report = _report(tmp_path / "repo_porter_report")
    assert report["summary"]["files_changed"] == 0
    assert (tmp_path / "repo_porter_report" / "changes.patch").read_bytes() == b""
    for page in ("report.md", "report.html"):  # the pages say what SRC holds too
        assert "not written: Permission denied" in (tmp_path / "repo_porter_report" / page).read_text()
    assert (src / "pkg" / "a.py").read_text() == CUDA


def test_refused_directory_link_in_out_is_a_failure(tmp_path):
    src, out, elsewhere = _repo(tmp_path), tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    out.mkdir()
    (out / "pkg").symlink_to(elsewhere, target_is_directory=True)
    code, stdout, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out), "--force")
    assert code == 2
    assert "0 changed" in stdout and "1 failed" in stdout
    assert not list(elsewhere.iterdir())
    assert _report(out / "porter_report")["summary"]["files_changed"] == 0


# --- 12. files CPython cannot compile --------------------------------------------------------


def _too_deep(src: Path) -> None:
    chain = ["import torch", "x = 1", "if x == 0:", "    y = torch.cuda.current_device()"]
    chain += [f"elif x == {i}:\n    y = {i}" for i in range(1, 10_000)]
    (src / "elif_chain.py").write_text("\n".join(chain) + "\n")
    (src / "long_expr.py").write_text("import torch\nx = " + " + ".join(str(i) for i in range(5_000)) + "\n")


def test_files_python_cannot_compile_are_skipped(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    _too_deep(src)
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out), "--no-cache")
    assert code == 0, err
    files = {f["path"]: f for f in _report(out / "porter_report")["files"]}
    for name in ("elif_chain.py", "long_expr.py"):
        assert files[name]["status"] == "skipped" and "Python's parser" in files[name]["reason"]
        assert (out / name).read_bytes() == (src / name).read_bytes()
    code, _, err = _porter("check", str(src), "--target", "mlu", "--exit-zero", "--no-cache")
    assert code == 0, err


# --- 13. a size limit ------------------------------------------------------------------------


def test_files_over_the_size_limit_are_skipped_and_copied(tmp_path):
    src, out = _repo(tmp_path), tmp_path / "out"
    big = CUDA + "".join(f"v{i} = {i}\n" for i in range(200_000))  # ~2.5 MB
    (src / "big.py").write_text(big)
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out), "--max-file-size", "1")
    assert code == 0, err
    files = {f["path"]: f for f in _report(out / "porter_report")["files"]}
    assert files["big.py"]["status"] == "skipped" and "--max-file-size" in files["big.py"]["reason"]
    assert (out / "big.py").read_text() == big
    # A first run (nothing to look up: the workers read the files) knows the size from stat.
    code, _, err = _porter(
        "convert", str(src), "--target", "mlu", "-o", str(tmp_path / "first"), "--no-cache", "--max-file-size", "1"
    )
    assert code == 0, err
    files = {f["path"]: f for f in _report(tmp_path / "first" / "porter_report")["files"]}
    assert files["big.py"]["status"] == "skipped" and "--max-file-size" in files["big.py"]["reason"]
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out), "--force", "--max-file-size", "5")
    assert code == 0, err
    assert "x.mlu()" in (out / "big.py").read_text()


# --- 14. CR-only line endings ----------------------------------------------------------------


def test_cr_only_file_converts_with_its_line_endings(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "cr.py").write_bytes(b"import torch\rx = torch.zeros(1).cuda()\ry = 1\r")
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out))
    assert code == 0, err
    new = (out / "cr.py").read_bytes()
    assert b"\n" not in new and b".mlu()" in new
    lines = new.split(b"\r")
    assert lines.index(b"import torch") < lines.index(b"import torch_mlu  # noqa: F401")
    compile(new.replace(b"\r", b"\n"), "cr.py", "exec")


# --- 15. stale temporaries and --no-cache ----------------------------------------------------


def _dead_pid() -> int:
    for pid in range(4_000_000, 3_000_000, -7919):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except OSError:
            continue
    pytest.skip("no free pid found")


# A porter killed while it rewrites SRC: in the rename of its first temporary file.
_KILLED_IN_PLACE = """
import os, signal, sys
real = os.replace
def replace(a, b, *args, **kwargs):
    if str(a).endswith(".porter-tmp") and str(b).endswith("a.py"):
        os.kill(os.getpid(), signal.SIGKILL)
    return real(a, b, *args, **kwargs)
os.replace = replace
from porter.cli import main
main(sys.argv[1:])
"""


def test_in_place_rerun_removes_only_porters_stale_temporaries(tmp_path):
    src = _repo(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED_IN_PLACE, "convert", str(src), "--target", "mlu", "--in-place", "--jobs", "1"],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        timeout=300,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    (left,) = [p for p in (src / "pkg").iterdir() if p.name.endswith(".porter-tmp")]
    dead = _dead_pid()
    # The user's files, some named exactly as porter's temporaries were before the run token.
    users = [
        src / ".data.csv.4000000.porter-tmp",
        src / "pkg" / f".a.py.{dead}.porter-tmp",
        src / "pkg" / ".a.py.porter-tmp",
        src / "pkg" / f".a.py.{dead}.porter-tmp.bak",
        src / f"a.py.{dead}.porter-tmp",
        src / "pkg" / left.name.replace(".porter-tmp", "0.porter-tmp"),
    ]
    for path in users:
        path.write_text("mine")
    code, _, err = _porter("convert", str(src), "--target", "mlu", "--in-place")
    assert code == 0, err
    assert not left.exists() and "removed 1 temporary file" in err
    assert "x.mlu()" in (src / "pkg" / "a.py").read_text()
    for path in users:
        assert path.read_text() == "mine", path
    assert not (tmp_path / "repo_porter_report" / ".porter-in-place.json").exists()  # the record is gone too


def test_in_place_never_writes_over_a_file_at_its_temporary_name(tmp_path, monkeypatch):
    from porter.core import files

    src = _repo(tmp_path)
    monkeypatch.setattr(files, "run_token", lambda: "0" * 16)
    theirs = src / "pkg" / files.temporary_name("a.py", "0" * 16)
    theirs.write_text("mine")
    result = _run("convert", str(src), "--target", "mlu", "--in-place", "--no-cache")
    assert result.exit_code == 2 and "pkg/a.py: not written" in result.output
    assert theirs.read_text() == "mine" and (src / "pkg" / "a.py").read_text() == CUDA


def test_no_cache_writes_nothing_to_the_user_cache(tmp_path):
    src, cache = _repo(tmp_path), tmp_path / "xdg"
    cache.mkdir()
    code, _, err = _porter(
        "convert",
        str(src),
        "--target",
        "mlu",
        "-o",
        str(tmp_path / "out"),
        "--no-cache",
        env={"XDG_CACHE_HOME": str(cache)},
    )
    assert code == 0, err
    assert list(cache.rglob("*")) == []


def test_check_no_cache_writes_nothing_to_the_user_cache(tmp_path):
    src, cache = _repo(tmp_path), tmp_path / "xdg"
    cache.mkdir()
    code, _, err = _porter(
        "check", str(src), "--target", "mlu", "--no-cache", "--exit-zero", env={"XDG_CACHE_HOME": str(cache)}
    )
    assert code == 0, err
    assert list(cache.rglob("*")) == []


def test_report_dir_keeps_the_users_files_that_look_like_porters_temporaries(tmp_path):
    src, rep = _repo(tmp_path), tmp_path / "rep"
    rep.mkdir()
    dead = _dead_pid()
    theirs = [rep / f".notes.md.{dead}.porter-tmp", rep / ".data.csv.4000000.porter-tmp"]
    for path in theirs:
        path.write_text("mine")
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(tmp_path / "o"), "--report-dir", str(rep))
    assert code == 0, err
    for path in theirs:
        assert path.read_text() == "mine"
