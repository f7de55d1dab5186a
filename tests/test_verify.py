"""`porter verify`: the fixtures under fixtures/verify (one tree that passes, one whose
modules each fail in one way), the LoRA smoke run on the bundled example, and the pieces
verify is made of (module discovery, failure classification, loss parsing)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from porter.emulator.targets import DEVICES
from porter.rules import TARGETS as RULE_TARGETS
from porter.verify.codes import CODES, by_code, for_target
from porter.verify.locate import innermost_frame
from porter.verify.lora import LoraRun, lora_command, parse_losses
from porter.verify.modules import find_modules, package_roots
from porter.verify.run import VerifyError, classify, read_target

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "verify"
# The runs need torch (the emulate extra); the pieces above them do not.
runs = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch: pip install '.[emulate]'")


def porter(*args: str, cwd: Path | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    return subprocess.run(
        [sys.executable, "-m", "porter", *args],
        cwd=cwd or ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# The emulated targets and the vendor line each verifies with (npu: its newest API list).
LINES = {"mlu": "2.4", "npu": "2.8"}


def tree(tmp_path: Path, name: str, target: str = "mlu") -> Path:
    """A copy of a fixture tree: verify writes porter_report/verify.json into it. The trees
    are ported for mlu; for another target its words take mlu's place (torch_npu, "npu",
    torch.npu), as its port would have them, and the report names that target."""
    dest = tmp_path / name
    shutil.copytree(FIXTURES / name, dest)
    if target != "mlu":
        for path in dest.rglob("*.py"):
            path.write_text(path.read_text(encoding="utf-8").replace("mlu", target), encoding="utf-8")
        report = dest / "porter_report" / "report.json"
        data = json.loads(report.read_text(encoding="utf-8"))
        report.write_text(json.dumps({**data, "target": target, "target_version": LINES[target]}), encoding="utf-8")
    return dest


# ---------------------------------------------------------------- the pieces


def test_modules_are_named_through_their_packages():
    found = {m.rel: (m.name, Path(m.path_entry).name) for m in find_modules(FIXTURES / "good")}
    assert found == {
        "export_checkpoint.py": ("export_checkpoint", "good"),
        "fused.py": ("fused", "good"),
        "tinytrain/__init__.py": ("tinytrain", "good"),
        "tinytrain/loop.py": ("tinytrain.loop", "good"),
        "tinytrain/model.py": ("tinytrain.model", "good"),
        "train.py": ("train", "good"),
    }


def test_src_layout_and_namespace_folders(tmp_path):
    # As in LLaMA-Factory: src/pkg is a package, pkg/third_party/kernels has no __init__.py
    # (a PEP 420 namespace inside the package), tests/ are loose scripts importing pkg.
    for rel in (
        "src/pkg/__init__.py",
        "src/pkg/third_party/__init__.py",
        "src/pkg/third_party/kernels/op.py",
        "tests/test_pkg.py",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("", encoding="utf-8")
    found = {m.rel: (m.name, Path(m.path_entry).name) for m in find_modules(tmp_path)}
    assert found["src/pkg/third_party/kernels/op.py"] == ("pkg.third_party.kernels.op", "src")
    assert found["tests/test_pkg.py"] == ("test_pkg", "tests")
    # Every import sees src/ (as after `pip install -e .`), never the loose tests/ folder.
    assert package_roots(find_modules(tmp_path)) == [str((tmp_path / "src").resolve())]


def test_modules_skip_porter_outputs_and_setup(tmp_path):
    for rel in (
        "setup.py",
        "porter_lora/train_lora.py",
        "porter_report/x.py",
        "pkg/__init__.py",
        "pkg/a-b.py",
        "pkg/m.py",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("", encoding="utf-8")
    assert [m.name for m in find_modules(tmp_path)] == ["pkg", "pkg.m"]


@pytest.mark.parametrize("dev", ["mlu", "npu"])
@pytest.mark.parametrize(
    ("error", "code"),
    [
        ("AttributeError: torch.mlu.nvtx is not available in torch_mlu for torch 2.4 (...)", "PRT702"),
        (
            "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, mlu:0 and cpu!",
            "PRT703",
        ),
        ("AssertionError: Torch not compiled with CUDA enabled", "PRT703"),
        ("RuntimeError: Expected one of cpu, cuda, privateuseone device type at start of device string: mlu", "PRT704"),
        ("AttributeError: module 'torch' has no attribute 'mlu'", "PRT704"),
        ("KeyError: 'hidden_size'", "PRT701"),
    ],
)
def test_failures_are_classified_by_their_message(error, code, dev):
    assert classify(error.replace("mlu", dev), dev) == code
    if dev != "mlu":  # the other device's words are no device problem here
        assert classify(error, dev) in ("PRT701", "PRT703")


def test_losses_are_read_from_either_log_format():
    own = "[porter-lora] step 1/3 loss 4.4426 lr 1e-2\n[porter-lora] step 2/3 loss 2.5 lr 1e-2\n"
    trainer = "{'loss': '3.666', 'grad_norm': '2.1'}\n{'loss': 2.07, 'epoch': 2.5}\n"
    assert parse_losses(own) == [4.4426, 2.5]
    assert parse_losses(trainer) == [3.666, 2.07]
    assert LoraRun(1, [], losses=[4.0, 3.5, 3.0, 2.0, 1.5, 1.0]).loss_fell
    assert not LoraRun(1, [], losses=[2.0, 2.0, 2.1, 2.2, 2.3, 2.4]).loss_fell
    assert not LoraRun(1, [], losses=[3.0, 1.0]).loss_fell  # too few to judge


@pytest.mark.parametrize("dev", ["mlu", "npu"])
def test_lora_command_uses_torchrun_for_several_devices(tmp_path, dev):
    one = lora_command(tmp_path / "t.py", tmp_path / "m", tmp_path / "d.jsonl", tmp_path / "o", 1, dev)
    two = lora_command(tmp_path / "t.py", tmp_path / "m", tmp_path / "d.jsonl", tmp_path / "o", 2)
    assert (
        one[0] == sys.executable
        and one[1].endswith("t.py")
        and "--device" in one
        and one[one.index("--device") + 1] == dev
    )
    assert two[1:5] == ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node"] and two[5] == "2"


def test_innermost_frame_inside_the_tree(tmp_path):
    out = (
        f'  File "/usr/lib/python3/x.py", line 3, in f\n  File "{tmp_path}/pkg/a.py", line 7, in g\n'
        f'  File "/venv/torch/nn.py", line 9, in h\nRuntimeError: boom\n'
    )
    assert innermost_frame(out, tmp_path) == ("pkg/a.py", 7)
    assert innermost_frame("no traceback", tmp_path) == (None, 0)


def test_target_comes_from_the_report(tmp_path):
    with pytest.raises(VerifyError, match=r"porter_report/report.json: no report"):
        read_target(tmp_path)
    (tmp_path / "porter_report").mkdir()
    (tmp_path / "porter_report" / "report.json").write_text('{"target": "hip"}', encoding="utf-8")
    with pytest.raises(VerifyError, match="target is 'hip'; porter verify emulates mlu and npu only"):
        read_target(tmp_path)
    (tmp_path / "porter_report" / "report.json").write_text('{"target": "npu"}', encoding="utf-8")
    assert read_target(tmp_path) == ("npu", None)
    (tmp_path / "porter_report" / "report.json").write_text(
        '{"target": "mlu", "target_version": "3.0"}', encoding="utf-8"
    )
    with pytest.raises(VerifyError, match="torch_mlu line '3.0' has no API list here"):
        read_target(tmp_path)
    (tmp_path / "porter_report" / "report.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(VerifyError, match="unreadable report"):
        read_target(tmp_path)
    assert read_target(FIXTURES / "good") == ("mlu", "2.4")


def test_verify_without_a_report_exits_2_naming_the_file(tmp_path):
    proc = porter("verify", str(tmp_path))
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        == f"porter: error: {tmp_path}/porter_report/report.json: no report; is {tmp_path} the output of `porter convert`?"
    )


def test_runtime_codes_are_explained_by_porter_rules():
    proc = porter("rules", "PRT703")
    assert proc.returncode == 0 and "PRT703 device-mismatch [mlu]" in proc.stdout
    listing = porter("rules", "--target", "mlu").stdout
    assert all(f"{r.code}  mlu  {r.name}" in listing for r in for_target("mlu"))
    assert CODES == tuple(f"PRT70{i}" for i in range(1, 9)) and tuple(by_code("mlu")) == CODES


def test_runtime_codes_are_worded_for_each_emulated_target():
    """One set of codes, each target's words: `porter rules PRT704 --target npu` names
    torch_npu (the CLI offers npu once porter.rules.terms.TARGETS has it)."""
    mlu, npu = by_code("mlu"), by_code("npu")
    assert tuple(npu) == CODES and for_target("hip") == ()
    assert mlu["PRT704"].name == "mlu-used-before-torch-mlu" and npu["PRT704"].name == "npu-used-before-torch-npu"
    assert "import torch_npu" in npu["PRT704"].suggestion and "torch.npu" in npu["PRT702"].summary
    assert all(r.target == "npu" and "mlu" not in (r.summary + r.why + (r.suggestion or "")) for r in npu.values())


# ---------------------------------------------------------------- the fixture trees


@pytest.mark.slow
@runs
@pytest.mark.parametrize("target", sorted(LINES))
def test_good_tree_passes_with_its_smoke_command(tmp_path, target):
    good = tree(tmp_path, "good", target)
    check = f"import torch, torch_{target}; assert torch.{target}.device_count() == 3"
    proc = porter(
        "verify",
        str(good),
        "--run",
        f"python -c '{check}' && python train.py --steps 3",
        "--devices",
        "3",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert data["findings"] == [] and (data["target"], data["target_version"]) == (target, LINES[target])
    assert data["summary"]["modules_by_status"] == {"missing-dependency": 1, "needs-setup": 1, "ok": 4}
    assert data["summary"]["missing_dependencies"] == ["apex"]
    assert data["summary"]["needs_setup"] == ["export_checkpoint"]  # asserts BASE_MODEL at its top level
    assert data["smoke"]["returncode"] == 0 and "losses" in " ".join(data["smoke"]["output_tail"])
    assert data["lora"]["skipped"] == "no porter_lora/train_lora.py in the tree"
    assert json.loads((good / "porter_report" / "verify.json").read_text(encoding="utf-8")) == data


EXPECTED_BAD = {
    ("prt701pkg/broken_import.py", 4, "PRT701"),
    ("prt702_missing_api.py", 5, "PRT702"),
    ("prt703_cpu_mixed.py", 6, "PRT703"),
    ("prt703_cuda_mixed.py", 5, "PRT703"),
    ("prt704_late_import.py", 3, "PRT704"),
    ("prt705_slow_import.py", 1, "PRT705"),
}


@pytest.fixture(scope="module", params=sorted(LINES))
def bad_run(tmp_path_factory, request) -> tuple[subprocess.CompletedProcess, Path, str]:
    target = request.param
    bad = tree(tmp_path_factory.mktemp("bad"), "bad", target)
    variable = DEVICES[target].visible_variable
    env_visible = os.environ.get(variable)
    os.environ[variable] = "7"  # verify's imports choose their own devices
    try:
        run = porter("verify", str(bad), "--timeout", "6", "--run", "python -c 'import prt703_cpu_mixed'")
        return run, bad, target
    finally:
        if env_visible is None:
            os.environ.pop(variable)
        else:
            os.environ[variable] = env_visible


@pytest.mark.slow
@runs
def test_bad_tree_fails_at_each_planted_line(bad_run):
    proc, bad, target = bad_run
    assert proc.returncode == 1, proc.stderr[-2000:]
    data = json.loads((bad / "porter_report" / "verify.json").read_text(encoding="utf-8"))
    found = {(f["path"], f["line"], f["rule"]) for f in data["findings"]}
    assert EXPECTED_BAD <= found
    # The --run command fails too, at the same planted line, reached through its import.
    assert ("prt703_cpu_mixed.py", 6, "PRT708") in found
    assert len(found) == len(EXPECTED_BAD) + 1
    assert (
        f"prt702_missing_api.py:5:1: PRT702 importing prt702_missing_api failed: AttributeError: torch.{target}.nvtx"
        in proc.stdout
    )
    assert f"on the emulated {target} (torch_{target} {LINES[target]})" in proc.stdout


@pytest.mark.slow
@runs
def test_bad_tree_formats_and_exit_zero(bad_run, tmp_path):
    _, bad, target = bad_run
    github = porter("verify", str(bad), "--timeout", "6", "--format", "github", "--exit-zero", "--no-lora")
    assert github.returncode == 0
    title = f"title=PRT704 {target}-used-before-torch-{target}::"
    assert f"::error file=prt704_late_import.py,line=3,col=1,{title}" in github.stdout
    assert "::warning file=prt705_slow_import.py,line=1" in github.stdout


# ---------------------------------------------------------------- LoRA on the bundled example


def assert_lora_trained(data: dict) -> None:
    runs = data["lora"]["runs"]
    assert [r["devices"] for r in runs] == [1, 2]
    for run in runs:
        assert run["returncode"] == 0 and run["loss_fell"], run
        assert len(run["losses"]) >= 4


@pytest.mark.slow
@runs
@pytest.mark.parametrize("target", [t for t in sorted(LINES) if t in RULE_TARGETS])
def test_converted_example_verifies_with_lora_on_one_and_two_devices(tmp_path, target):
    shutil.copytree(ROOT / "examples" / "cuda_trainer", tmp_path / "cuda_trainer")
    conv = porter("convert", "cuda_trainer", "--target", target, cwd=tmp_path)
    assert conv.returncode == 0, conv.stderr
    proc = porter("verify", f"cuda_trainer_{target}", "--format", "json", cwd=tmp_path, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert data["target"] == target
    assert_lora_trained(data)


@pytest.mark.slow
@runs
@pytest.mark.parametrize("target", sorted(LINES))
def test_the_rendered_entry_point_verifies_on_one_and_two_devices(tmp_path, target):
    """porter_lora rendered for the target (what convert writes) in a tree ported for it:
    verify trains it on 1 and 2 emulated devices over the vendor's backend. Independent of
    whether `porter convert` takes the target yet."""
    from porter.lora import render_lora

    out = tree(tmp_path, "good", target)
    render_lora(out, out / "porter_lora", target)
    proc = porter("verify", str(out), "--format", "json", timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert data["target"] == target and data["findings"] == []
    assert_lora_trained(data)
    assert all(f"--device {target}" in " ".join(r["command"]) for r in data["lora"]["runs"])


FAILING_ENTRY = """import sys
print("[porter-lora] step 1/4 loss 2.0 lr 1e-2")
raise RuntimeError("the entry point broke")
"""
FLAT_ENTRY = """for step in range(1, 7):
    print(f"[porter-lora] step {step}/6 loss {2.0 + step / 10:.3f} lr 1e-2")
"""


@pytest.mark.slow
@runs
@pytest.mark.parametrize(("entry", "code", "line"), [(FAILING_ENTRY, "PRT706", 3), (FLAT_ENTRY, "PRT707", 1)])
def test_a_failing_or_flat_lora_run_is_a_finding(tmp_path, entry, code, line):
    out = tree(tmp_path, "good")
    (out / "porter_lora").mkdir()
    (out / "porter_lora" / "train_lora.py").write_text(entry, encoding="utf-8")
    proc = porter("verify", str(out), "--format", "json")
    assert proc.returncode == 1, proc.stderr[-2000:]
    findings = json.loads(proc.stdout)["findings"]
    assert {(f["rule"], f["path"], f["line"]) for f in findings} == {(code, "porter_lora/train_lora.py", line)}
    # One finding per run: on 1 and on 2 emulated devices.
    assert sorted(f["message"].split(" emulated")[0][-1] for f in findings) == ["1", "2"]
