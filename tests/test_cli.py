"""The command line as a user meets it: outputs, refusals, robustness, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from porter.cli import main

CUDA_SRC = "import torch\n\n\ndef f(x):\n    return x.cuda()\n"


def _repo(tmp_path: Path) -> Path:
    src = tmp_path / "repo"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "a.py").write_text(CUDA_SRC)
    (src / "pkg" / "plain.py").write_text("print('hello')\n")
    (src / "pkg" / "broken.py").write_text("def f(:\n    return torch.cuda.current_device()\n")
    (src / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (src / ".git").mkdir()
    (src / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return src


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_convert_writes_sibling_tree_and_reports(tmp_path):
    src = _repo(tmp_path)
    before = {p: p.read_bytes() for p in src.rglob("*") if p.is_file()}
    result = _run("convert", str(src), "--target", "mlu")
    assert result.exit_code == 0, result.output
    out = tmp_path / "repo_mlu"
    assert (out / "pkg" / "a.py").read_text().count("x.mlu()") == 1
    assert (out / "pkg" / "plain.py").read_bytes() == (src / "pkg" / "plain.py").read_bytes()
    assert (out / "blob.bin").read_bytes() == (src / "blob.bin").read_bytes()
    assert not (out / ".git").exists()
    report = json.loads((out / "porter_report" / "report.json").read_text())
    statuses = {f["path"]: f["status"] for f in report["files"]}
    assert statuses["pkg/a.py"] == "changed"
    assert statuses["pkg/broken.py"] == "skipped"
    broken = next(f for f in report["files"] if f["path"] == "pkg/broken.py")
    assert "does not parse" in broken["reason"] and "line 1" in broken["reason"]
    assert (out / "pkg" / "broken.py").read_bytes() == (src / "pkg" / "broken.py").read_bytes()
    assert {p: p.read_bytes() for p in src.rglob("*") if p.is_file()} == before, "SRC was modified"


def test_diff_prints_patch_and_writes_nothing(tmp_path):
    src = _repo(tmp_path)
    result = _run("convert", str(src), "--target", "mlu", "--diff")
    assert result.exit_code == 0
    assert "+    return x.mlu()" in result.output
    assert not (tmp_path / "repo_mlu").exists()


@pytest.mark.parametrize("where", ["inside", "same", "nonempty"])
def test_refuses_bad_destinations(tmp_path, where):
    src = _repo(tmp_path)
    out = {"inside": src / "out", "same": src, "nonempty": tmp_path / "full"}[where]
    if where == "nonempty":
        out.mkdir()
        (out / "keep.txt").write_text("mine")
    result = _run("convert", str(src), "--target", "mlu", "-o", str(out))
    assert result.exit_code == 2
    assert str(out) in result.output
    if where == "nonempty":
        assert (out / "keep.txt").read_text() == "mine"
        assert _run("convert", str(src), "--target", "mlu", "-o", str(out), "--force").exit_code == 0


def test_in_place_is_atomic_and_keeps_mode(tmp_path):
    src = _repo(tmp_path)
    target = src / "pkg" / "a.py"
    os.chmod(target, 0o750)
    result = _run("convert", str(src), "--target", "mlu", "--in-place")
    assert result.exit_code == 0, result.output
    assert "x.mlu()" in target.read_text()
    assert oct(target.stat().st_mode & 0o777) == oct(0o750)
    assert not list(src.rglob("*.porter-tmp"))
    # The report goes beside SRC, never into it (SRC holds the user's files only).
    assert not (src / "porter_report").exists() and not (src / "porter_lora").exists()
    patch = (tmp_path / "repo_porter_report" / "changes.patch").read_text()
    assert "-    return x.cuda()" in patch


def test_symlinks_are_recreated_never_followed(tmp_path):
    src = _repo(tmp_path)
    outside = tmp_path / "outside.py"
    outside.write_text(CUDA_SRC)
    (src / "link.py").symlink_to(outside)
    (src / "linkdir").symlink_to(tmp_path, target_is_directory=True)
    result = _run("convert", str(src), "--target", "mlu", "-o", str(tmp_path / "o"))
    assert result.exit_code == 0, result.output
    out = tmp_path / "o"
    assert (out / "link.py").is_symlink() and os.readlink(out / "link.py") == str(outside)
    assert (out / "linkdir").is_symlink()
    assert outside.read_text() == CUDA_SRC


def test_out_symlink_leading_outside_is_not_written_through(tmp_path):
    src = _repo(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "o"
    out.mkdir()
    (out / "pkg").symlink_to(elsewhere, target_is_directory=True)
    result = _run("convert", str(src), "--target", "mlu", "-o", str(out), "--force")
    assert not list(elsewhere.iterdir()), "porter wrote through a symlink outside OUT"
    assert "leads outside OUT" in result.output


def test_crlf_encoding_and_mode_preserved(tmp_path):
    src = tmp_path / "r"
    src.mkdir()
    (src / "w.py").write_bytes(b"import torch\r\nx = torch.zeros(1).cuda()\r\n")
    gbk = "# -*- coding: gbk -*-\n# 中文注释\nimport torch\ny = torch.ones(1).cuda()  # 显卡\n".encode("gbk")
    (src / "g.py").write_bytes(gbk)
    os.chmod(src / "w.py", 0o755)
    assert _run("convert", str(src), "--target", "mlu", "-o", str(tmp_path / "o")).exit_code == 0
    w = (tmp_path / "o" / "w.py").read_bytes()
    assert w == b"import torch\r\nimport torch_mlu  # noqa: F401\r\nx = torch.zeros(1).mlu()\r\n"
    assert os.stat(tmp_path / "o" / "w.py").st_mode & 0o777 == 0o755
    g = (tmp_path / "o" / "g.py").read_bytes().decode("gbk")
    assert "torch.ones(1).mlu()  # 显卡" in g and "# 中文注释" in g


def test_every_file_is_copied_with_its_mode_large_and_small(tmp_path):
    """Small files are written from the bytes porter read, large unhandled ones are copied
    by path; both keep their bytes and mode, and SRC keeps its own."""
    src = _repo(tmp_path)
    big = bytes(range(256)) * 2048  # 512 KiB: more than porter holds in memory unread
    (src / "weights.bin").write_bytes(big)
    (src / "tool").write_bytes(b"#!/bin/sh\necho hi\n")
    (src / "private.txt").write_text("secret")
    os.chmod(src / "weights.bin", 0o640)
    os.chmod(src / "tool", 0o755)
    os.chmod(src / "private.txt", 0o600)
    big_json = '{"rows": [' + ",".join(['{"text": "cuda is a word here"}'] * 20000) + "]}"
    (src / "data.json").write_text(big_json)  # large but handled: read whole, kept as data
    out = tmp_path / "o"
    assert _run("convert", str(src), "--target", "mlu", "-o", str(out)).exit_code == 0
    for rel in ("weights.bin", "tool", "private.txt", "data.json"):
        assert (out / rel).read_bytes() == (src / rel).read_bytes(), rel
        assert (out / rel).stat().st_mode == (src / rel).stat().st_mode, rel
    assert (src / "weights.bin").read_bytes() == big


def _wide_repo(tmp_path: Path, count: int = 150) -> Path:
    """Enough files for OUT to be written by a background process."""
    src = tmp_path / "wide"
    for i in range(count):
        folder = src / f"d{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{i}.py").write_text(CUDA_SRC if i % 10 == 0 else f"x = {i}\n")
        os.chmod(folder / f"m{i}.py", 0o755 if i % 3 == 0 else 0o640)
    return src


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_large_tree_written_in_background_equals_serial_write(tmp_path, jobs):
    src = _wide_repo(tmp_path)
    out = tmp_path / f"o{jobs}"
    assert _run("convert", str(src), "--target", "mlu", "-o", str(out), "--jobs", jobs).exit_code == 0
    for path in src.rglob("*.py"):
        rel = path.relative_to(src)
        got = (out / rel).read_text()
        assert got == (
            path.read_text()
            .replace("x.cuda()", "x.mlu()")
            .replace("import torch\n", "import torch\nimport torch_mlu  # noqa: F401\n", 1)
            if "cuda" in path.read_text()
            else path.read_text()
        ), rel
        assert (out / rel).stat().st_mode == path.stat().st_mode, rel


def test_large_tree_never_written_through_a_symlink_in_out(tmp_path):
    src = _wide_repo(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "o"
    out.mkdir()
    (out / "d0").symlink_to(elsewhere, target_is_directory=True)
    result = _run("convert", str(src), "--target", "mlu", "-o", str(out), "--force")
    assert not list(elsewhere.iterdir()), "porter wrote through a symlink outside OUT"
    assert result.output.count("leads outside OUT") == len(list((src / "d0").iterdir()))
    assert (out / "d1" / "m1.py").read_text() == "x = 1\n"


def test_rules_list_and_explain():
    listing = _run("rules")
    assert listing.exit_code == 0 and "PRT101" in listing.output and "torch-cuda-namespace" in listing.output
    one = _run("rules", "PRT106", "--target", "mlu")
    assert one.exit_code == 0 and "Example" in one.output and "Why" in one.output
    assert _run("rules", "PRT999").exit_code == 2


def test_python_dash_m_entry_point(tmp_path):
    src = _repo(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "porter", "convert", str(src), "--target", "hip", "--diff"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # nothing to rewrite on HIP: torch.cuda stays


def test_usage_errors_exit_2(tmp_path):
    assert _run("convert", str(tmp_path), "--target", "tpu").exit_code == 2
    assert _run("convert", str(tmp_path / "missing"), "--target", "mlu").exit_code == 2
    assert _run("convert", str(tmp_path), "--target", "mlu", "--target-version", "9.9").exit_code == 2


def test_convert_options_default_as_the_api_does():
    """--max-file-size's default is the API's (written out: `porter --help` loads no run code)."""
    from porter.commands.convert import convert
    from porter.run_options import MAX_FILE_MB

    assert next(p.default for p in convert.params if p.name == "max_mb") == MAX_FILE_MB
    from porter.commands.check import check

    assert next(p.default for p in check.params if p.name == "max_mb") == MAX_FILE_MB  # one option, both commands


def test_target_version_picks_the_rules_for_that_torch_mlu_line(tmp_path):
    """torch.amp.custom_fwd(device_type=...) exists from torch 2.4; on 2.1 the MLU AMP module's own."""
    src = tmp_path / "r"
    src.mkdir()
    (src / "a.py").write_text("import torch\n\n\n@torch.cuda.amp.custom_fwd\ndef f(ctx, x):\n    return x\n")
    new = _run("convert", str(src), "--target", "mlu", "--diff", "--no-cache")
    old = _run("convert", str(src), "--target", "mlu", "--target-version", "2.1", "--diff", "--no-cache")
    assert '+@torch.amp.custom_fwd(device_type="mlu")' in new.output
    assert "+@torch.mlu.amp.custom_fwd\n" in old.output


def test_select_and_ignore_by_code_prefix(tmp_path):
    src = tmp_path / "r"
    src.mkdir()
    (src / "a.py").write_text('import torch\nx = torch.zeros(1).cuda()\ndist_backend = "nccl"\n')
    only_names = _run("convert", str(src), "--target", "mlu", "--diff", "--no-cache", "--select", "PRT104")
    assert "+x = torch.zeros(1).mlu()" in only_names.output and '"cncl"' not in only_names.output
    assert "import torch_mlu" not in only_names.output  # PRT107 was not selected
    no_nccl = _run("convert", str(src), "--target", "mlu", "--diff", "--no-cache", "--ignore", "PRT2")
    assert '"cncl"' not in no_nccl.output and ".mlu()" in no_nccl.output


def test_process_exit_codes_and_flushed_output(tmp_path):
    """`python -m porter` ends without the interpreter's tear-down: the exit code and every
    byte of output must survive that."""
    import subprocess
    import sys

    src = _wide_repo(tmp_path)
    out_file = tmp_path / "findings.txt"
    with out_file.open("w") as fh:
        done = subprocess.run(
            [sys.executable, "-m", "porter", "check", str(src), "-t", "mlu", "--no-cache", "--fail-on", "warning"],
            stdout=fh,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert done.returncode == 1
    text = out_file.read_text()
    assert text.count("PRT") >= 15 and text.endswith("\n")  # 15 files use .cuda(): all reported
    assert subprocess.run([sys.executable, "-m", "porter", "--version"], capture_output=True).returncode == 0
    missing = subprocess.run(
        [sys.executable, "-m", "porter", "check", str(tmp_path / "nope"), "-t", "mlu"], capture_output=True, text=True
    )
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_named_pipe_in_src_is_left_out_not_waited_on(tmp_path):
    src = _repo(tmp_path)
    os.mkfifo(src / "pkg" / "queue.py")  # reading it would block forever
    result = _run("convert", str(src), "--target", "mlu", "-o", str(tmp_path / "o"))
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "o" / "pkg" / "queue.py").exists()
    assert "x.mlu()" in (tmp_path / "o" / "pkg" / "a.py").read_text()
    assert _run("check", str(src), "--target", "mlu", "--exit-zero").exit_code == 0
