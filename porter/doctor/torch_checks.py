"""torch, the vendor extension, the cards and the dtypes they compute in.

Each check takes the Runtime (torch imported once) and returns one Result; a check that
needs what an earlier one found missing is skipped, naming that check.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from porter.doctor.lines import admits, known_lines, releases
from porter.doctor.model import FAIL, OK, SKIP, WARN, Result
from porter.doctor.runtime import Runtime, error_text, torch_minor, vendor_line
from porter.tables.packages import PackageTable

ROCM_INFO = Path("/opt/rocm/.info/version")


def vendor_check_name(target: str) -> str:
    return "torch_mlu" if target == "mlu" else "rocm"


def check_torch(rt: Runtime, table: PackageTable, line: str) -> Result:
    spec = releases(table.by_distribution("torch"), line)
    if rt.torch is None:
        return Result("torch", FAIL, f"torch does not import: {rt.torch_error}", _install_torch(rt.target, spec, line))
    version = str(rt.torch.__version__)
    if rt.target != "mlu":
        return _hip_torch(rt, version, spec)
    if rt.emulated:
        return Result(
            "torch",
            OK,
            f"torch {version}: the host's, under porter's emulated torch_mlu "
            f"(not compared with the {line} line's {spec or 'releases'})",
        )
    if re.match(r"cu\d", version.partition("+")[2]):
        return Result(
            "torch",
            FAIL,
            f"torch {version} is a CUDA build: torch_mlu needs Cambricon's torch",
            _install_torch("mlu", spec, line),
        )
    if spec and not admits(spec, version):
        return Result(
            "torch",
            FAIL,
            f"torch {version} is not a release of the torch_mlu {line} line ({spec})",
            _install_torch("mlu", spec, line),
        )
    return Result("torch", OK, f"torch {version} (torch_mlu {line} line: {spec or 'no bound known'})")


def _hip_torch(rt: Runtime, version: str, spec: str | None) -> Result:
    hip = rt.vendor_version
    cuda = getattr(rt.torch.version, "cuda", None)
    if not hip:
        kind = f"a CUDA build (CUDA {cuda})" if cuda else "a CPU build"
        return Result(
            "torch",
            FAIL,
            f"torch {version} is {kind}: it cannot drive a DCU or an AMD GPU",
            _install_torch("hip", spec, "any"),
        )
    if spec and not admits(spec, version):
        return Result(
            "torch",
            FAIL,
            f"torch {version} is not one of the releases that work on ROCm ({spec})",
            _install_torch("hip", spec, "any"),
        )
    return Result("torch", OK, f"torch {version}, a ROCm build (HIP {hip})")


def _install_torch(target: str, spec: str | None, line: str) -> str:
    if target == "mlu":
        pinned = f"torch{spec} " if spec else "torch "
        return f"Use Cambricon's PyTorch container for torch {line}: it has {pinned}and the torch_mlu built for it"
    return (
        f"pip install torch --index-url {rocm_index()} (AMD GPUs), or the torch wheel of your DTK release (Hygon DCU)"
    )


def rocm_index() -> str:
    """PyTorch's wheel index for the installed ROCm (/opt/rocm/.info/version), else ROCm 6.2's."""
    try:
        found = torch_minor(ROCM_INFO.read_text(encoding="utf-8"))
    except OSError:
        found = None
    return f"https://download.pytorch.org/whl/rocm{found or '6.2'}"


def check_vendor(rt: Runtime, line: str) -> Result:
    name = vendor_check_name(rt.target)
    if rt.torch is None:
        return Result(name, SKIP, "needs torch (see the torch check)")
    if rt.target != "mlu":
        if not rt.vendor_version:
            return Result(name, SKIP, "needs a ROCm build of torch (see the torch check)")
        if not rt.vendor_ready():
            return Result(
                name,
                FAIL,
                f"torch {rt.torch.__version__} is a ROCm build, but torch.cuda.is_available() is False",
                "Check the driver and the cards with rocm-smi (hy-smi on Hygon DCU), that your user is in the "
                "render and video groups, and HIP_VISIBLE_DEVICES",
            )
        return Result(name, OK, f"HIP {rt.vendor_version}: torch.cuda drives the cards")
    torch_version = str(rt.torch.__version__)
    if rt.vendor_error is not None:
        return Result(
            name,
            FAIL,
            f"import torch_mlu failed: {rt.vendor_error}",
            f"Use Cambricon's PyTorch container for torch {line} (torch and the torch_mlu built for it); "
            f"to try the port without cards: porter run --emulate mlu -- porter doctor",
        )
    version = rt.vendor_version
    built_for = vendor_line(version)
    if not rt.emulated and built_for and built_for != torch_minor(torch_version):
        return Result(
            name,
            FAIL,
            f"torch_mlu {version} is built for torch {built_for}, but torch {torch_version} is installed",
            f"Use Cambricon's PyTorch container for torch {built_for} (torch and torch_mlu of one release)",
        )
    if built_for and built_for != line:
        again = (
            f"Run porter convert and porter doctor with --target-version {built_for}"
            if built_for in known_lines("mlu")
            else f"Use Cambricon's PyTorch container for torch {line}"
        )
        return Result(
            name, FAIL, f"torch_mlu {version} is the {built_for} line; the checks are for the {line} line", again
        )
    if not rt.vendor_ready():
        return Result(
            name,
            FAIL,
            f"torch_mlu {version} imports, but torch.mlu.is_available() is False",
            "Check the driver and the cards with cnmon, and MLU_VISIBLE_DEVICES (unset, or naming cards that exist)",
        )
    what = "porter's emulator on the CPU" if rt.emulated else f"built for torch {built_for or 'an unknown line'}"
    return Result(name, OK, f"torch_mlu {version} ({what}; line {line})")


def check_devices(rt: Runtime) -> Result:
    if not rt.vendor_ready():
        return Result("devices", SKIP, f"needs {vendor_check_name(rt.target)} (see that check)")
    count = rt.device_count()
    if count == 0:
        visible = "MLU_VISIBLE_DEVICES" if rt.target == "mlu" else "HIP_VISIBLE_DEVICES"
        tool = "cnmon" if rt.target == "mlu" else "rocm-smi (hy-smi on Hygon DCU)"
        return Result("devices", FAIL, "no cards are visible", f"Check the cards with {tool}, and {visible}")
    names = Counter(_device_name(rt, i) for i in range(count))
    listed = ", ".join(f"{n} x {name}" if n > 1 else name for name, n in names.items())
    return Result("devices", OK, f"{count} {rt.device_type} card{'s' if count > 1 else ''}: {listed}")


def _device_name(rt: Runtime, index: int) -> str:
    try:
        return str(rt.devices.get_device_name(index))
    except Exception as exc:
        return f"? ({error_text(exc, 80)})"


def check_dtype(rt: Runtime, short: str) -> Result:
    """fp16 or bf16: the card computes a small matmul in it (and, for bf16, says it can)."""
    if not rt.vendor_ready() or rt.device_count() == 0:
        return Result(short, SKIP, "needs a card (see the devices check)")
    torch = rt.torch
    dtype = torch.float16 if short == "fp16" else torch.bfloat16
    module = f"torch.{rt.device_type}"
    problem = None
    if short == "bf16":
        probe = getattr(rt.devices, "is_bf16_supported", None)
        if callable(probe) and not probe():
            problem = f"{module}.is_bf16_supported() is False"
    if problem is None:
        problem = _matmul_problem(rt, dtype)
    if problem is None:
        return Result(short, OK, f"{short} matmul on {rt.device_type}:0 gives the right result")
    if short == "bf16":
        return Result(short, WARN, problem, "Train in fp16 instead of bf16 (--fp16; bf16: false in a YAML config)")
    return Result(
        short,
        FAIL,
        problem,
        "Update the card's driver and the vendor's torch build (fp16 must run on the card); train in fp32 until then",
    )


def _matmul_problem(rt: Runtime, dtype) -> str | None:
    torch = rt.torch
    try:
        a = torch.full((8, 8), 0.5, dtype=dtype, device=f"{rt.device_type}:0")
        got = (a @ a).float().cpu()
    except Exception as exc:
        return f"{dtype} matmul on {rt.device_type}:0 failed: {error_text(exc)}"
    if not bool(torch.all(got == 2.0)):
        return f"{dtype} matmul on {rt.device_type}:0 gave a wrong result ({got.flatten()[:4].tolist()}, expected 2.0)"
    return None


def torch_to_pair(rt: Runtime, torch_result: Result, table: PackageTable, line: str) -> str | None:
    """The torch release torchvision and torchaudio must pair with: the installed one when
    the torch check passed, else the one release the line pins, else the installed one."""
    installed = str(rt.torch.__version__) if rt.torch is not None else None
    if torch_result.status == OK:
        return installed
    pinned = re.fullmatch(r"\s*===?\s*([0-9][\w.+!-]*)\s*", releases(table.by_distribution("torch"), line) or "")
    return pinned.group(1) if pinned else installed
