"""`porter doctor`: each check against injected fakes (a fake torch, fake dist-info folders,
fake process-group workers), the command on plain CPU torch and without torch (the vendor
check fails, exit 1), and one run under the emulated MLU with two cards.

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
from porter.doctor.torch_checks import check_devices, check_dtype, check_torch, check_vendor
from porter.tables.torch_pairs import pair_for
from porter.tables.versions import available_versions

ROOT = Path(__file__).resolve().parents[1]
LINE = available_versions("mlu")[-1]


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
    """torch.mlu / torch.cuda of a fake machine."""

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
        cuda=cards,
        float16=torch.float16,
        bfloat16=torch.bfloat16,
        full=full,
        all=torch.all,
    )


def test_torch_mlu_built_for_another_torch_or_line():
    table = line_table("mlu", LINE)
    other = next(v for v in available_versions("mlu") if v != LINE)
    rt = Runtime("mlu", fake_torch(f"{LINE}.0", FakeCards()), vendor_version=f"1.20.0-torch{other}.0")
    got = check_vendor(rt, LINE)
    assert got.status == FAIL and f"built for torch {other}" in got.detail and f"torch {other}" in got.fix
    rt = Runtime("mlu", fake_torch(f"{other}.0", FakeCards()), vendor_version=f"1.20.0-torch{other}.0")
    got = check_vendor(rt, LINE)  # the port is for LINE, the machine runs `other`
    assert got.status == FAIL and f"--target-version {other}" in got.fix
    spec = releases(table.by_distribution("torch"), LINE)
    torch_check = check_torch(rt, table, LINE)
    assert torch_check.status == (FAIL if spec and not admits(spec, f"{other}.0") else OK)
    assert vendor_line("1.24.1-torch2.5.0") == "2.5" and vendor_line("emulated-2.1") == "2.1"


def test_cards_and_dtypes_of_a_fake_machine():
    rt = Runtime("mlu", fake_torch(cards=FakeCards(0)), vendor_version=f"1.24.0-torch{LINE}.0")
    assert check_vendor(rt, LINE).status == FAIL and "cnmon" in check_vendor(rt, LINE).fix
    assert [check_devices(rt).status, check_dtype(rt, "fp16").status] == [SKIP, SKIP]
    rt = Runtime("mlu", fake_torch(cards=FakeCards(2, bf16=False)), vendor_version=f"1.24.0-torch{LINE}.0")
    assert check_devices(rt).detail == "2 mlu cards: 2 x MLU370-X8"
    assert check_dtype(rt, "fp16").status == OK
    bf16 = check_dtype(rt, "bf16")
    assert bf16.status == WARN and "is_bf16_supported() is False" in bf16.detail and "fp16" in bf16.fix
    rt = Runtime("mlu", fake_torch(cards=FakeCards(1), broken_fp16=True), vendor_version=f"1.24.0-torch{LINE}.0")
    fp16 = check_dtype(rt, "fp16")
    assert fp16.status == FAIL and "CNNL_STATUS_NOT_SUPPORTED" in fp16.detail


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
    "passes": "import json, os\nr = int(os.environ['RANK'])\n"
    "print(json.dumps({'rank': r, 'backend': 'cncl', 'device': f'mlu:{r}', 'value': [3.0, 3.0]}))\n",
    "fails": "import os, sys, time\nif os.environ['RANK'] == '1':\n"
    "    sys.exit('RuntimeError: CNCL error: unhandled system error (cnclInit)')\ntime.sleep(30)\n",
    "hangs": "import time\ntime.sleep(30)\n",
}


@pytest.mark.parametrize("kind", sorted(WORKERS))
def test_process_group_outcomes(tmp_path, kind):
    worker = tmp_path / "worker.py"
    worker.write_text(WORKERS[kind], encoding="utf-8")
    rt = Runtime("mlu", fake_torch(cards=FakeCards(2)), vendor_version=f"1.24.0-torch{LINE}.0")
    got = check_process_group(rt, timeout=2 if kind == "hangs" else 20, worker=worker)
    if kind == "passes":
        assert (
            got.status == OK and got.detail == "cncl: 2 processes initialised it and all_reduce agreed on mlu:0, mlu:1"
        )
        return
    assert got.status == FAIL and "torchrun --standalone --nproc_per_node 2" in got.fix
    if kind == "fails":  # the rank that failed says why, though rank 0 was still waiting for it
        assert got.detail == "cncl: rank 1 exited with 1: RuntimeError: CNCL error: unhandled system error (cnclInit)"
    else:
        assert got.detail == "cncl: rank 0 did not finish in 2 s"


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


def test_cuda_builds_on_mlu(tmp_path):
    table = line_table("mlu", LINE)
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
    rt = Runtime("mlu", fake_torch("2.4.0", FakeCards()), vendor_version="1.24.0-torch2.4.0")
    pair = pair_for("2.4.0")
    vision = check_paired("torchvision", installed, rt, "mlu", "2.4.0")
    assert vision.status == FAIL and vision.detail.startswith("torchvision 0.16.0+cu121 is a CUDA build (+cu121): ")
    assert vision.fix == (
        f"pip uninstall -y torchvision && pip install torchvision=={pair.torchvision} "
        "--index-url https://download.pytorch.org/whl/cpu --no-deps"
    )
    audio = check_paired("torchaudio", installed, rt, "mlu", "2.4.0")
    assert (
        audio.status == FAIL
        and "requires nvidia-cudnn-cu12" in audio.detail
        and f"torchaudio=={pair.torchaudio}" in audio.fix
    )
    bnb = check_cuda_only("bitsandbytes", installed, table, "mlu", LINE)
    assert table.by_distribution("bitsandbytes").action == "drop"
    assert bnb.status == FAIL and table.by_distribution("bitsandbytes").reason.rstrip(".") in bnb.detail
    assert bnb.fix.startswith("pip uninstall -y bitsandbytes")
    flash = check_cuda_only("flash-attn", installed, table, "mlu", LINE)
    assert flash.status == FAIL and "holds a CUDA extension (flash_attn_2_cuda)" in flash.detail
    assert flash.fix.startswith("pip uninstall -y flash-attn")
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
    other = tmp_path / "other-torch"
    dist_info(other, "torchvision-0.16.0.dist-info", "torchvision", "0.16.0")
    got = check_paired("torchvision", Installed([str(other)]), rt, "mlu", "2.4.0")
    assert got.status == FAIL and f"torch 2.4.0 pairs with torchvision {pair.torchvision}" in got.detail


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


def test_doctor_without_torch(tmp_path):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(
        "raise ImportError('torch is not installed here')\n", encoding="utf-8"
    )
    code, got = doctor(["--target", "mlu"], dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)])))
    by = {r["name"]: r for r in got}
    assert code == 1 == exit_code_of(got)
    assert by["torch"]["status"] == FAIL and "ImportError: torch is not installed here" in by["torch"]["detail"]
    assert by["torch"]["fix"].startswith("Use Cambricon's PyTorch container")
    assert all(by[n]["status"] == SKIP for n in ("torch_mlu", "devices", "fp16", "bf16", "process-group"))


def exit_code_of(results: list[dict]) -> int:
    from porter.doctor.model import Result

    return exit_code(Result(**r) for r in results)


def test_doctor_on_cpu_torch_with_cuda_packages(tmp_path):
    """Plain CPU torch (no torch_mlu), and a site folder first on the path with an old
    transformers, a CUDA torchvision, bitsandbytes and a renamed deepspeed-mlu."""
    pytest.importorskip("torch")
    site = tmp_path / "site"
    dist_info(site, "transformers-4.30.2.dist-info", "transformers", "4.30.2")
    dist_info(site, "torchvision-0.16.0+cu121.dist-info", "torchvision", "0.16.0+cu121")
    dist_info(site, "bitsandbytes-0.41.1.dist-info", "bitsandbytes", "0.41.1")
    renamed_deepspeed_mlu(site)
    code, got = doctor(["--target", "mlu"], dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(ROOT)])))
    by = {r["name"]: r for r in got}
    assert [r["name"] for r in got] == [
        "torch",
        "torch_mlu",
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
    assert by["torch_mlu"]["status"] == FAIL and "No module named 'torch_mlu'" in by["torch_mlu"]["detail"]
    assert "porter run --emulate mlu -- porter doctor" in by["torch_mlu"]["fix"]
    assert by["devices"]["status"] == SKIP
    spec = releases(line_table("mlu", LINE).by_distribution("transformers"), LINE)
    assert spec, "the package table says which transformers releases know MLU"
    assert not admits(spec, "4.30.2")
    assert by["transformers"] == {
        "name": "transformers",
        "status": FAIL,
        "fix": f'pip install "transformers{spec}"',
        "detail": by["transformers"]["detail"],
    }
    assert by["transformers"]["detail"].startswith(
        f"transformers 4.30.2 is not one of the releases that work on mlu {LINE}"
    )
    assert by["torchvision"]["status"] == FAIL and "+cu121" in by["torchvision"]["detail"]
    assert "--index-url https://download.pytorch.org/whl/cpu --no-deps" in by["torchvision"]["fix"]
    torch_spec = releases(line_table("mlu", LINE).by_distribution("torch"), LINE) or ""
    if torch_spec.startswith("=="):  # this torch is not the line's: pair with the line's
        assert f"torchvision=={pair_for(torch_spec[2:]).torchvision} " in by["torchvision"]["fix"]
    assert by["bitsandbytes"]["status"] == FAIL and by["bitsandbytes"]["fix"].startswith(
        "pip uninstall -y bitsandbytes"
    )
    assert by["renamed-dist-info"]["status"] == FAIL and "deepspeed-mlu" in by["renamed-dist-info"]["detail"]
    assert by["deepspeed"]["detail"].startswith(
        "deepspeed-mlu 0.9.5 [in deepspeed-0.9.5.dist-info: see renamed-dist-info]"
    )


def test_usage_errors():
    from click.testing import CliRunner

    from porter.cli import main

    assert CliRunner().invoke(main, ["doctor", "--target", "mlu", "--target-version", "9.9"]).exit_code == 2
    assert CliRunner().invoke(main, ["doctor", "--target", "hip", "--target-version", LINE]).exit_code == 2
    assert CliRunner().invoke(main, ["doctor", "--format", "xml"]).exit_code == 2


@pytest.mark.slow
def test_doctor_under_the_emulator():
    pytest.importorskip("torch")
    from porter.emulator import environment
    from porter.emulator.launch import prepare

    prepare(quiet=True)
    env = environment(devices=2)
    env.update(OMP_NUM_THREADS="1")
    code, got = doctor(["--target", "mlu"], env, timeout=300)
    by = {r["name"]: r for r in got}
    assert code == exit_code_of(got)
    assert by["torch_mlu"]["status"] == OK and by["torch_mlu"]["detail"].startswith(f"torch_mlu emulated-{LINE} ")
    assert by["torch"]["status"] == OK and "emulated torch_mlu" in by["torch"]["detail"]
    assert by["devices"] == {
        "name": "devices",
        "status": OK,
        "fix": "",
        "detail": "2 mlu cards: 2 x MLU370-X8 (emulated by porter)",
    }
    assert by["fp16"]["status"] == by["bf16"]["status"] == OK
    assert by["process-group"]["detail"] == "cncl: 2 processes initialised it and all_reduce agreed on mlu:0, mlu:1"
    table = line_table("mlu", LINE)
    for name in ("transformers", "accelerate", "peft"):
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            assert by[name]["status"] == SKIP
            continue
        spec = releases(table.by_distribution(name), LINE)
        assert by[name]["detail"].startswith(f"{name} {version} ")
        if not spec or admits(spec, version):
            assert by[name]["status"] == OK, by[name]
        elif only_too_new(spec, version):  # newer than the line's torch allows; the host's torch runs it
            assert by[name]["status"] == WARN and by[name]["fix"] == f'pip install "{name}{spec}" on the MLU machine'
        else:
            assert by[name]["status"] == FAIL and by[name]["fix"] == f'pip install "{name}{spec}"'
    assert code == (1 if any(r["status"] == FAIL for r in got) else 0)
    assert by["renamed-dist-info"]["status"] == OK
