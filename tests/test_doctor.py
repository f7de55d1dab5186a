"""`porter doctor`: each check against injected fakes (a fake torch, fake dist-info folders,
fake process-group workers), the command on plain CPU torch and without torch (the vendor
check fails, exit 1), and one run under each emulated target (MLU, NPU) with two cards.

Tests that hold for every target with a vendor package (torch_mlu, torch_npu) are
parametrized by target; what differs is read from the records (porter/doctor/targets.py,
porter/emulator/targets.py) or spelt out per target in EXPECT.
Expectations about library versions are read from the package table, never written here:
the table is data that changes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

import pytest

from porter.doctor.builds import check_cuda_only, check_paired
from porter.doctor.hacks import check_renamed
from porter.doctor.installed import Installed
from porter.doctor.libraries import check_library
from porter.doctor.lines import admits, line_table, only_too_new, releases
from porter.doctor.model import FAIL, OK, SKIP, WARN, exit_code
from porter.doctor.process_group import check_process_group
from porter.doctor.runtime import Runtime, vendor_line
from porter.doctor.targets import DOCTOR_TARGETS, doctor_target
from porter.doctor.toolkit import check_toolkit
from porter.doctor.torch_checks import check_devices, check_dtype, check_torch, check_vendor
from porter.emulator.targets import DEVICES
from porter.rules.terms import TARGETS
from porter.tables.torch_pairs import pair_for
from porter.tables.versions import available_versions

ROOT = Path(__file__).resolve().parents[1]
LINE = available_versions("mlu")[-1]
# The targets whose vendor side is a package (torch_mlu, torch_npu), and porter emulates.
VENDOR_TARGETS = [t for t in TARGETS if doctor_target(t).package is not None]


def newest(target: str) -> str:
    return available_versions(target)[-1]


def vendor_version(target: str, release: str) -> str:
    """The vendor package's __version__ for one built for torch `release`: torch_mlu writes
    "1.24.0-torch2.4.0", torch_npu "2.8.0.post2"."""
    return {"mlu": f"1.24.0-torch{release}", "npu": f"{release}.post2"}[target]


def line_release(target: str, line: str) -> str:
    """The torch release the package table pins for `line` ("2.7.1" on npu's 2.7 line)."""
    spec = releases(line_table(target, line).by_distribution("torch"), line) or f"=={line}.0"
    return spec.lstrip("=")


# What each vendor target's messages say, where the records do not hold it whole.
EXPECT = {
    "mlu": SimpleNamespace(install="Use Cambricon's PyTorch container", card="MLU370-X8"),
    "npu": SimpleNamespace(install='pip install "torch==', card="Ascend910B2"),
}


def test_every_target_has_a_record():
    """--target takes every target porter has; the vendor targets are the emulated ones."""
    assert set(DOCTOR_TARGETS) == set(TARGETS)
    assert set(VENDOR_TARGETS) == set(DEVICES) == set(EXPECT)
    for target in VENDOR_TARGETS:
        spec = doctor_target(target)
        assert spec.package == DEVICES[target].package and spec.backend == DEVICES[target].backend
        assert spec.visible_variable == DEVICES[target].visible_variable


@pytest.mark.parametrize(
    ("target", "version", "line"),
    [
        ("mlu", "1.24.1-torch2.5.0", "2.5"),
        ("mlu", "1.22.2-torch2.4.0-cxx11-abi", "2.4"),
        ("mlu", "emulated-2.1", "2.1"),
        ("npu", "2.8.0.post2", "2.8"),
        ("npu", "2.7.1", "2.7"),
        ("npu", "2.10.0.post4+git5dd8ef3", "2.10"),
        ("npu", "emulated-2.6", "2.6"),
        ("hip", "6.1.40091", None),
    ],
)
def test_vendor_line(target, version, line):
    assert vendor_line(version, target) == line


def dist_info(
    root: Path,
    folder: str,
    name: str,
    version: str,
    requires: tuple[str, ...] = (),
    record: tuple[str, ...] | None = None,
) -> Path:
    """A metadata folder as pip leaves it (METADATA, and RECORD when given)."""
    path = root / folder
    path.mkdir(parents=True)
    text = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires
    )
    (path / "METADATA").write_text(text, encoding="utf-8")
    if record is not None:
        (path / "RECORD").write_text("".join(f"{p},,\n" for p in record), encoding="utf-8")
    return path


def renamed_deepspeed_mlu(root: Path, edit_name: bool = False) -> Path:
    """Cambricon's deepspeed-mlu with its folder renamed to upstream's (and Name edited too)."""
    return dist_info(
        root,
        "deepspeed-0.9.5.dist-info",
        "deepspeed" if edit_name else "deepspeed-mlu",
        "0.9.5",
        record=(
            "deepspeed/__init__.py",
            "deepspeed_mlu-0.9.5.dist-info/METADATA",
            "deepspeed_mlu-0.9.5.dist-info/RECORD",
        ),
    )


class FakeCards:
    """torch.mlu / torch.npu / torch.cuda of a fake machine."""

    def __init__(self, count: int = 2, bf16: bool = True, name: str = "MLU370-X8") -> None:
        self.count, self.bf16, self.name = count, bf16, name

    def is_available(self) -> bool:
        return self.count > 0

    def device_count(self) -> int:
        return self.count

    def get_device_name(self, index: int) -> str:
        return self.name

    def is_bf16_supported(self) -> bool:
        return self.bf16


def fake_torch(
    version: str = "2.4.0",
    cards: FakeCards | None = None,
    hip: str | None = None,
    cuda: str | None = None,
    broken_fp16: bool = False,
):
    """A torch whose tensors are the real CPU torch's, whatever device they are asked on."""
    torch = pytest.importorskip("torch")

    def full(shape, value, dtype=None, device=None):
        if broken_fp16 and dtype == torch.float16:
            raise RuntimeError("CNNL_STATUS_NOT_SUPPORTED: matmul in half")
        return torch.full(shape, value, dtype=dtype)

    return SimpleNamespace(
        __version__=version,
        version=SimpleNamespace(hip=hip, cuda=cuda),
        mlu=cards,
        npu=cards,
        cuda=cards,
        float16=torch.float16,
        bfloat16=torch.bfloat16,
        full=full,
        all=torch.all,
    )


@pytest.mark.parametrize("target", VENDOR_TARGETS)
def test_vendor_package_built_for_another_torch_or_line(target):
    line = newest(target)
    table = line_table(target, line)
    other = next(v for v in available_versions(target) if v != line)
    built_for_other = vendor_version(target, line_release(target, other))
    rt = Runtime(target, fake_torch(f"{line}.0", FakeCards()), vendor_version=built_for_other)
    got = check_vendor(rt, line, table)
    assert got.status == FAIL and f"built for torch {other}" in got.detail and other in got.fix
    assert got.fix.startswith(EXPECT[target].install)
    rt = Runtime(target, fake_torch(line_release(target, other), FakeCards()), vendor_version=built_for_other)
    got = check_vendor(rt, line, table)  # the port is for `line`, the machine runs `other`
    assert got.status == FAIL and f"--target-version {other}" in got.fix
    spec = releases(table.by_distribution("torch"), line)
    torch_check = check_torch(rt, table, line)
    assert torch_check.status == (FAIL if spec and not admits(spec, line_release(target, other)) else OK)


def test_torch_npu_needs_the_cpu_build_of_torch():
    line = newest("npu")
    table = line_table("npu", line)
    release = line_release("npu", line)
    ready = vendor_version("npu", release)
    for torch in (fake_torch(f"{release}+cu128", FakeCards()), fake_torch(release, FakeCards(), cuda="12.8")):
        got = check_torch(Runtime("npu", torch, vendor_version=ready), table, line)
        assert got.status == FAIL and "a CUDA build" in got.detail and "the CPU build of torch" in got.detail
        assert f"torch=={release}" in got.fix and "--index-url https://download.pytorch.org/whl/cpu" in got.fix
    got = check_torch(Runtime("npu", fake_torch(f"{release}+cpu", FakeCards()), vendor_version=ready), table, line)
    assert got.status == OK and got.detail == f"torch {release}+cpu (torch_npu {line} line: =={release})"


@pytest.mark.parametrize("target", VENDOR_TARGETS)
def test_cards_and_dtypes_of_a_fake_machine(target):
    line, card = newest(target), EXPECT[target].card
    release = line_release(target, line)
    ready = vendor_version(target, release)
    rt = Runtime(target, fake_torch(release, cards=FakeCards(0)), vendor_version=ready)
    spec = doctor_target(target)
    assert check_vendor(rt, line).status == FAIL and spec.facts.monitor_tool in check_vendor(rt, line).fix
    assert spec.visible_variable in check_vendor(rt, line).fix
    assert [check_devices(rt).status, check_dtype(rt, "fp16").status] == [SKIP, SKIP]
    rt = Runtime(target, fake_torch(release, FakeCards(2, bf16=False, name=card)), vendor_version=ready)
    assert check_devices(rt).detail == f"2 {target} cards: 2 x {card}"
    assert check_dtype(rt, "fp16").status == OK
    bf16 = check_dtype(rt, "bf16")
    assert bf16.status == WARN and f"torch.{target}.is_bf16_supported() is False" in bf16.detail
    assert "fp16" in bf16.fix
    rt = Runtime(target, fake_torch(release, FakeCards(1), broken_fp16=True), vendor_version=ready)
    fp16 = check_dtype(rt, "fp16")
    assert fp16.status == FAIL and "CNNL_STATUS_NOT_SUPPORTED" in fp16.detail


@pytest.mark.parametrize("target", VENDOR_TARGETS)
def test_no_card_visible_names_the_variable(target, monkeypatch):
    """The driver answers, but the visible-devices variable hides every card."""
    spec = doctor_target(target)
    release = line_release(target, newest(target))

    class Hidden(FakeCards):
        def is_available(self) -> bool:
            return True

    monkeypatch.setenv(spec.visible_variable, "7")
    rt = Runtime(target, fake_torch(release, Hidden(0)), vendor_version=vendor_version(target, release))
    got = check_devices(rt)
    assert got.status == FAIL and got.detail == f"no cards are visible ({spec.visible_variable}='7')"
    assert got.fix == f"Check the cards with {spec.facts.monitor_tool}, and {spec.visible_variable}"


def test_detect_target(monkeypatch):
    """The target whose vendor package is importable, else hip on a ROCm build of torch."""
    import porter.doctor.run as run

    for package, target in (("torch_npu", "npu"), ("torch_mlu", "mlu")):
        monkeypatch.setattr(run.importlib.util, "find_spec", lambda name, found=package: name == found or None)
        assert run.detect_target() == target
    monkeypatch.setattr(run.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(run, "load_runtime", lambda target: Runtime(target, vendor_version="6.1.40091"))
    assert run.detect_target() == "hip"


def test_cann_environment(tmp_path, monkeypatch):
    """npu's toolkit check: CANN's set_env.sh exports ASCEND_TOOLKIT_HOME (and ASCEND_HOME_PATH)."""
    for variable in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH"):
        monkeypatch.delenv(variable, raising=False)
    line = newest("npu")
    release = line_release("npu", line)
    working = Runtime("npu", fake_torch(release, FakeCards(2)), vendor_version=vendor_version("npu", release))
    broken = Runtime("npu", fake_torch(), vendor_error="ImportError: libhccl.so: cannot open shared object file")
    assert check_toolkit(Runtime("mlu", fake_torch(cards=FakeCards(2)))) is None  # no toolkit there
    got = check_toolkit(broken)
    assert got.status == FAIL and "ASCEND_TOOLKIT_HOME and ASCEND_HOME_PATH unset" in got.detail
    assert got.fix.startswith("source /usr/local/Ascend/ascend-toolkit/set_env.sh")
    vendor = check_vendor(broken, line, line_table("npu", line))  # the import failed for want of CANN
    assert vendor.status == FAIL and vendor.fix.startswith("source /usr/local/Ascend/ascend-toolkit/set_env.sh")
    assert vendor.fix.endswith("porter run --emulate npu -- porter doctor")
    missing = Runtime("npu", fake_torch(), vendor_error="ModuleNotFoundError: No module named 'torch_npu'")
    assert check_vendor(missing, line, line_table("npu", line)).fix.startswith('pip install "torch-npu')
    got = check_toolkit(working)
    assert got.status == WARN and "ASCEND_HOME_PATH" in got.detail
    monkeypatch.setenv("ASCEND_TOOLKIT_HOME", str(tmp_path / "nowhere"))
    assert check_toolkit(working).status == FAIL
    import platform

    info = tmp_path / "latest" / f"{platform.machine()}-linux" / "ascend_toolkit_install.info"
    info.parent.mkdir(parents=True)
    info.write_text("package_name=Ascend-cann-toolkit\nversion=8.0.RC2\n", encoding="utf-8")
    monkeypatch.setenv("ASCEND_TOOLKIT_HOME", str(tmp_path / "latest"))
    got = check_toolkit(working)
    assert got.status == OK and got.detail == f"CANN 8.0.RC2 loaded from {tmp_path / 'latest'} (ASCEND_TOOLKIT_HOME)"
    emulated = Runtime("npu", fake_torch(cards=FakeCards(2)), vendor_version=f"emulated-{line}")
    assert check_toolkit(emulated).status == SKIP


def test_hip_needs_a_rocm_build_of_torch():
    table = line_table("hip", "any")
    for torch, kind in (
        (fake_torch("2.4.1+cu121", FakeCards(), cuda="12.1"), "a CUDA build"),
        (fake_torch("2.4.1+cpu", FakeCards()), "a CPU build"),
    ):
        got = check_torch(Runtime("hip", torch), table, "any")
        assert got.status == FAIL and kind in got.detail and "download.pytorch.org/whl/rocm" in got.fix
        assert check_vendor(Runtime("hip", torch), "any").status == SKIP
    rt = Runtime(
        "hip", fake_torch("2.4.1+rocm6.1", FakeCards(8, name="AMD Instinct MI300X")), vendor_version="6.1.40091"
    )
    assert check_vendor(rt, "any").status == OK
    assert check_devices(rt).detail == "8 cuda cards: 8 x AMD Instinct MI300X"


WORKERS = {
    "passes": "import json, os, sys\nr = int(os.environ['RANK'])\n"
    "print(json.dumps({'rank': r, 'backend': sys.argv[2], 'device': f'{sys.argv[1]}:{r}', 'value': [3.0, 3.0]}))\n",
    "fails": "import os, sys, time\nif os.environ['RANK'] == '1':\n"
    "    sys.exit('RuntimeError: CNCL error: unhandled system error (cnclInit)')\ntime.sleep(30)\n",
    "hangs": "import time\ntime.sleep(30)\n",
    # Both ranks agree, then rank 0 aborts at its exit (as a C++ thread left running does).
    "aborts-at-exit": "import json, os, sys, time\nr = int(os.environ['RANK'])\n"
    "print(json.dumps({'rank': r, 'backend': sys.argv[2], 'device': f'{sys.argv[1]}:{r}', 'value': [3.0, 3.0]}), "
    "flush=True)\nif r == 0:\n    sys.stderr.write('terminate called without an active exception\\n'); os.abort()\n"
    "time.sleep(1)\n",
}


@pytest.mark.parametrize("target", VENDOR_TARGETS)
@pytest.mark.parametrize("kind", sorted(WORKERS))
def test_process_group_outcomes(tmp_path, kind, target):
    worker = tmp_path / "worker.py"
    worker.write_text(WORKERS[kind], encoding="utf-8")
    spec = doctor_target(target)
    rt = Runtime(target, fake_torch(cards=FakeCards(2)), vendor_version=vendor_version(target, "2.4.0"))
    got = check_process_group(rt, timeout=2 if kind == "hangs" else 20, worker=worker)
    agreed = f"{spec.backend}: 2 processes initialised it and all_reduce agreed on {target}:0, {target}:1"
    if kind == "passes":
        assert got.status == OK and got.detail == agreed
        return
    assert got.fix.startswith(f"See the whole log: {spec.collective_debug} torchrun --standalone --nproc_per_node 2 ")
    assert got.fix.endswith(f"{worker} {target} {spec.backend}")
    if kind == "aborts-at-exit":  # rank 1 still finishes: it had its result too
        assert got.status == WARN
        assert got.detail == f"{agreed}, but rank 0 then exited with -6: terminate called without an active exception"
        return
    assert got.status == FAIL
    if kind == "fails":  # the rank that failed says why, though rank 0 was still waiting for it
        assert got.detail == (
            f"{spec.backend}: rank 1 exited with 1: RuntimeError: CNCL error: unhandled system error (cnclInit)"
        )
    else:
        assert got.detail == f"{spec.backend}: rank 0 did not finish in 2 s"


def test_renamed_deepspeed_mlu_and_other_hacks(tmp_path):
    table = line_table("mlu", LINE)
    for edit_name in (False, True):
        root = tmp_path / f"edited-{edit_name}"
        folder = renamed_deepspeed_mlu(root, edit_name)
        got = check_renamed(Installed([str(root)]), table, "mlu", LINE)
        assert got.status == FAIL and "Cambricon's deepspeed-mlu 0.9.5" in got.detail
        assert ("RECORD lists deepspeed_mlu-0.9.5.dist-info" if edit_name else "Name: deepspeed-mlu") in got.detail
        assert f"mv {folder} {root / 'deepspeed_mlu-0.9.5.dist-info'}" in got.fix
        library = check_library("deepspeed", Installed([str(root)]), table, "mlu", LINE)
        assert library.detail.startswith(f"{'deepspeed' if edit_name else 'deepspeed-mlu'} 0.9.5")
    both = tmp_path / "both"
    dist_info(both, "deepspeed-0.16.4.dist-info", "deepspeed", "0.16.4")
    dist_info(both, "deepspeed_mlu-0.9.5.dist-info", "deepspeed-mlu", "0.9.5")
    got = check_renamed(Installed([str(both)]), table, "mlu", LINE)
    assert got.status == FAIL and "both installed" in got.detail and got.fix.startswith("pip uninstall -y deepspeed")
    clean = tmp_path / "clean"
    dist_info(
        clean, "PyYAML-6.0.1.dist-info", "PyYAML", "6.0.1", record=("yaml/__init__.py", "PyYAML-6.0.1.dist-info/RECORD")
    )
    assert check_renamed(Installed([str(clean)]), table, "mlu", LINE).status == OK
    # On npu (no DeepSpeed of the vendor's) the renamed folder is still found and undone;
    # upstream DeepSpeed beside deepspeed-mlu is none of its business.
    npu = line_table("npu", newest("npu"))
    got = check_renamed(Installed([str(tmp_path / "edited-False")]), npu, "npu", newest("npu"))
    assert got.status == FAIL and got.fix.startswith("Undo the rename: mv ")
    assert check_renamed(Installed([str(both)]), npu, "npu", newest("npu")).status == OK


@pytest.mark.parametrize("target", VENDOR_TARGETS)
def test_cuda_builds_on_the_target(tmp_path, target):
    line = newest(target)
    table = line_table(target, line)
    dist_info(tmp_path, "torchvision-0.16.0+cu121.dist-info", "torchvision", "0.16.0+cu121")
    dist_info(tmp_path, "torchaudio-2.4.0.dist-info", "torchaudio", "2.4.0", requires=("nvidia-cudnn-cu12 ==9.1.0.70",))
    dist_info(tmp_path, "bitsandbytes-0.45.0.dist-info", "bitsandbytes", "0.45.0")
    dist_info(
        tmp_path,
        "flash_attn-2.7.4.dist-info",
        "flash_attn",
        "2.7.4",
        record=("flash_attn/__init__.py", "flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so"),
    )
    installed = Installed([str(tmp_path)])
    rt = Runtime(target, fake_torch("2.4.0", FakeCards()), vendor_version=vendor_version(target, "2.4.0"))
    pair = pair_for("2.4.0")
    vision = check_paired("torchvision", installed, rt, target, "2.4.0")
    assert vision.status == FAIL and vision.detail.startswith("torchvision 0.16.0+cu121 is a CUDA build (+cu121): ")
    assert vision.fix == (
        f"pip uninstall -y torchvision && pip install torchvision=={pair.torchvision} "
        "--index-url https://download.pytorch.org/whl/cpu --no-deps"
    )
    audio = check_paired("torchaudio", installed, rt, target, "2.4.0")
    assert (
        audio.status == FAIL
        and "requires nvidia-cudnn-cu12" in audio.detail
        and f"torchaudio=={pair.torchaudio}" in audio.fix
    )
    bnb = check_cuda_only("bitsandbytes", installed, table, target, line)
    entry = table.by_distribution("bitsandbytes")
    assert entry.action in ("drop", "flag"), "the table says bitsandbytes does not run there"
    assert entry.reason.rstrip(".") in bnb.detail
    if entry.action == "drop":  # mlu
        assert bnb.status == FAIL and bnb.fix.startswith("pip uninstall -y bitsandbytes")
    else:  # npu: flagged, with what to do instead
        assert bnb.status == WARN and bnb.fix == entry.suggestion
    flash = check_cuda_only("flash-attn", installed, table, target, line)
    assert flash.status == FAIL and "holds a CUDA extension (flash_attn_2_cuda)" in flash.detail
    assert flash.fix.startswith("pip uninstall -y flash-attn")
    rocm = tmp_path / "rocm-build"
    dist_info(rocm, "torchvision-0.19.0+rocm6.1.dist-info", "torchvision", "0.19.0+rocm6.1")
    got = check_paired("torchvision", Installed([str(rocm)]), rt, target, "2.4.0")
    assert got.status == FAIL and "is a ROCm build (+rocm6.1)" in got.detail
    other = tmp_path / "other-torch"
    dist_info(other, "torchvision-0.16.0.dist-info", "torchvision", "0.16.0")
    got = check_paired("torchvision", Installed([str(other)]), rt, target, "2.4.0")
    assert got.status == FAIL and f"torch 2.4.0 pairs with torchvision {pair.torchvision}" in got.detail


def test_cuda_builds_on_hip(tmp_path):
    dist_info(tmp_path, "bitsandbytes-0.45.0.dist-info", "bitsandbytes", "0.45.0")
    installed = Installed([str(tmp_path)])
    hip = line_table("hip", "any")  # bitsandbytes has a ROCm backend from some release on; flash-attn a ROCm build
    bnb = check_cuda_only("bitsandbytes", installed, hip, "hip", "any")
    spec = releases(hip.by_distribution("bitsandbytes"), "any")
    assert (bnb.status, bnb.fix) == (
        (FAIL, f'pip install "bitsandbytes{spec}"')
        if spec and not admits(spec, "0.45.0")
        else (WARN, hip.by_distribution("bitsandbytes").suggestion)
    )
    rocm_flash = tmp_path / "rocm"
    dist_info(rocm_flash, "flash_attn-2.7.4.dist-info", "flash_attn", "2.7.4", record=("flash_attn_2_cuda.so",))
    assert check_cuda_only("flash-attn", Installed([str(rocm_flash)]), hip, "hip", "any").status == WARN


def doctor(args: list[str], env: dict[str, str], timeout: int = 120) -> tuple[int, list[dict]]:
    proc = subprocess.run(
        [sys.executable, "-m", "porter", "doctor", *args, "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.returncode, json.loads(proc.stdout)


def clean_env(**more: str) -> dict[str, str]:
    """This environment without a loaded CANN or visible-devices choices, plus `more`."""
    env = {k: v for k, v in os.environ.items() if k not in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH")}
    for spec in DOCTOR_TARGETS.values():
        env.pop(spec.visible_variable, None)
    return dict(env, **more)


@pytest.mark.parametrize("target", VENDOR_TARGETS)
def test_doctor_without_torch(tmp_path, target):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(
        "raise ImportError('torch is not installed here')\n", encoding="utf-8"
    )
    code, got = doctor(["--target", target], clean_env(PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)])))
    by = {r["name"]: r for r in got}
    spec = doctor_target(target)
    assert code == 1 == exit_code_of(got)
    assert by["torch"]["status"] == FAIL and "ImportError: torch is not installed here" in by["torch"]["detail"]
    assert by["torch"]["fix"].startswith(EXPECT[target].install)
    assert all(by[n]["status"] == SKIP for n in (spec.check_name, "devices", "fp16", "bf16", "process-group"))
    if spec.toolkit is not None:  # npu: CANN is not loaded either
        assert by[spec.toolkit.check]["status"] == FAIL


def exit_code_of(results: list[dict]) -> int:
    from porter.doctor.model import Result

    return exit_code(Result(**r) for r in results)


@pytest.mark.parametrize("target", VENDOR_TARGETS)
def test_doctor_on_cpu_torch_with_cuda_packages(tmp_path, target):
    """Plain CPU torch (no vendor package), and a site folder first on the path with an old
    transformers, a CUDA torchvision, bitsandbytes and a renamed deepspeed-mlu."""
    pytest.importorskip("torch")
    line, spec = newest(target), doctor_target(target)
    site = tmp_path / "site"
    dist_info(site, "transformers-4.30.2.dist-info", "transformers", "4.30.2")
    dist_info(site, "torchvision-0.16.0+cu121.dist-info", "torchvision", "0.16.0+cu121")
    dist_info(site, "bitsandbytes-0.41.1.dist-info", "bitsandbytes", "0.41.1")
    renamed_deepspeed_mlu(site)
    code, got = doctor(["--target", target], clean_env(PYTHONPATH=os.pathsep.join([str(site), str(ROOT)])))
    by = {r["name"]: r for r in got}
    assert [r["name"] for r in got] == [
        "torch",
        *([spec.toolkit.check] if spec.toolkit else []),
        spec.check_name,
        "devices",
        "fp16",
        "bf16",
        "process-group",
        "transformers",
        "accelerate",
        "peft",
        "deepspeed",
        "llamafactory",
        "torchvision",
        "torchaudio",
        "flash-attn",
        "bitsandbytes",
        "renamed-dist-info",
    ]
    assert code == 1 == exit_code_of(got)
    vendor = by[spec.check_name]
    assert vendor["status"] == FAIL and f"No module named '{spec.package}'" in vendor["detail"]
    assert vendor["fix"].endswith(f"porter run --emulate {target} -- porter doctor")
    assert by["devices"]["status"] == SKIP
    table = line_table(target, line)
    spec_tf = releases(table.by_distribution("transformers"), line)
    assert spec_tf, f"the package table says which transformers releases know the {target.upper()}"
    assert not admits(spec_tf, "4.30.2")
    assert by["transformers"] == {
        "name": "transformers",
        "status": FAIL,
        "fix": f'pip install "transformers{spec_tf}"',
        "detail": by["transformers"]["detail"],
    }
    assert by["transformers"]["detail"].startswith(
        f"transformers 4.30.2 is not one of the releases that work on {target} {line}"
    )
    assert by["torchvision"]["status"] == FAIL and "+cu121" in by["torchvision"]["detail"]
    assert "--index-url https://download.pytorch.org/whl/cpu --no-deps" in by["torchvision"]["fix"]
    torch_spec = releases(table.by_distribution("torch"), line) or ""
    if torch_spec.startswith("=="):  # this torch is not the line's: pair with the line's
        assert f"torchvision=={pair_for(torch_spec[2:]).torchvision} " in by["torchvision"]["fix"]
    bnb = table.by_distribution("bitsandbytes")
    assert by["bitsandbytes"]["status"] == (FAIL if bnb.action == "drop" else WARN)
    assert by["bitsandbytes"]["fix"].startswith("pip uninstall -y bitsandbytes" if bnb.action == "drop" else "QLoRA")
    assert by["renamed-dist-info"]["status"] == FAIL and "deepspeed-mlu" in by["renamed-dist-info"]["detail"]
    assert by["deepspeed"]["detail"].startswith(
        "deepspeed-mlu 0.9.5 [in deepspeed-0.9.5.dist-info: see renamed-dist-info]"
    )


def test_usage_errors():
    from click.testing import CliRunner

    from porter.cli import main

    assert CliRunner().invoke(main, ["doctor", "--target", "mlu", "--target-version", "9.9"]).exit_code == 2
    assert CliRunner().invoke(main, ["doctor", "--target", "hip", "--target-version", LINE]).exit_code == 2
    assert CliRunner().invoke(main, ["doctor", "--target", "npu", "--target-version", "2.4"]).exit_code == 2
    assert CliRunner().invoke(main, ["doctor", "--format", "xml"]).exit_code == 2


def test_no_target_found(monkeypatch):
    """Without --target and with no vendor package or ROCm torch, a usage error names them all."""
    from click.testing import CliRunner

    import porter.doctor.run as run
    from porter.cli import main

    monkeypatch.setattr(run.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(run, "load_runtime", lambda target: Runtime(target))
    got = CliRunner().invoke(main, ["doctor"])
    assert got.exit_code == 2
    assert "none of torch_mlu, torch_npu imports and torch is not a ROCm build" in got.output
    assert "--target mlu|hip|npu" in got.output


@pytest.mark.slow
@pytest.mark.parametrize("target", VENDOR_TARGETS)
def test_doctor_under_the_emulator(target):
    """`porter doctor` with no --target under `porter run --emulate TARGET`: it finds the
    emulated vendor package, and every check passes on two emulated cards."""
    pytest.importorskip("torch")
    from porter.emulator import environment
    from porter.emulator.launch import prepare

    prepare(quiet=True)
    line, spec, device = newest(target), doctor_target(target), DEVICES[target]
    env = environment(devices=2, base=clean_env(), target=target)
    env.update(OMP_NUM_THREADS="1")
    code, got = doctor([], env, timeout=300)
    by = {r["name"]: r for r in got}
    assert code == exit_code_of(got)
    vendor = by[spec.check_name]  # the target found without --target
    assert vendor["status"] == OK and vendor["detail"].startswith(f"{spec.package} emulated-{line} ")
    assert by["torch"]["status"] == OK and f"emulated {spec.package}" in by["torch"]["detail"]
    assert by["devices"] == {
        "name": "devices",
        "status": OK,
        "fix": "",
        "detail": f"2 {target} cards: 2 x {device.card} (emulated by porter)",
    }
    assert by["fp16"]["status"] == by["bf16"]["status"] == OK
    if spec.toolkit is not None:
        assert by[spec.toolkit.check]["status"] == SKIP
    agreed = f"{spec.backend}: 2 processes initialised it and all_reduce agreed on {target}:0, {target}:1"
    # WARN: a rank of the emulator sometimes aborts at its exit, after its result (a gloo
    # thread at interpreter exit): the check says so instead of failing.
    assert by["process-group"]["status"] in (OK, WARN) and by["process-group"]["detail"].startswith(agreed)
    table = line_table(target, line)
    for name in ("transformers", "accelerate", "peft"):
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            assert by[name]["status"] == SKIP
            continue
        spec_lib = releases(table.by_distribution(name), line)
        assert by[name]["detail"].startswith(f"{name} {version} ")
        if not spec_lib or admits(spec_lib, version):
            assert by[name]["status"] == OK, by[name]
        elif only_too_new(spec_lib, version):  # newer than the line's torch allows; the host's torch runs it
            assert by[name]["status"] == WARN
            assert by[name]["fix"] == f'pip install "{name}{spec_lib}" on the {device.label} machine'
        else:
            assert by[name]["status"] == FAIL and by[name]["fix"] == f'pip install "{name}{spec_lib}"'
    assert code == (1 if any(r["status"] == FAIL for r in got) else 0)
    assert by["renamed-dist-info"]["status"] == OK
