"""torch, the vendor extension, the cards and the dtypes they compute in.

Each check takes the Runtime (torch imported once) and returns one Result; a check that
needs what an earlier one found missing is skipped, naming that check. What differs between
targets is read from the target's record (porter/doctor/targets.py).
"""

from __future__ import annotations

import os
import re
from collections import Counter

from porter.doctor.lines import admits, known_lines, releases
from porter.doctor.model import FAIL, OK, SKIP, WARN, Result
from porter.doctor.runtime import Runtime, error_text, vendor_line
from porter.doctor.targets import torch_minor
from porter.doctor.targets import DoctorTarget, doctor_target
from porter.tables.packages import PackageTable


def vendor_check_name(target: str) -> str:
    return doctor_target(target).check_name


def install_fix(template: str, spec: DoctorTarget, table: PackageTable | None, line: str, **more: str) -> str:
    """One of the target's install_* templates, filled in for `line` (see DoctorTarget)."""

    def pinned(distribution: str | None) -> str:
        found = releases(table.by_distribution(distribution), line) if table is not None and distribution else None
        return f"{distribution or ''}{found or ''}"

    index = spec.index() if "{index}" in template else ""
    return template.format(line=line, torch=pinned("torch"), vendor=pinned(spec.distribution), index=index, **more)


def check_torch(rt: Runtime, table: PackageTable, line: str) -> Result:
    spec = releases(table.by_distribution("torch"), line)
    target = rt.spec
    if rt.torch is None:
        return Result(
            "torch",
            FAIL,
            f"torch does not import: {rt.torch_error}",
            install_fix(target.install_torch, target, table, line),
        )
    version = str(rt.torch.__version__)
    if target.build is not None:
        return _build_torch(rt, version, spec, table)
    package = target.package
    if rt.emulated:
        return Result(
            "torch",
            OK,
            f"torch {version}: the host's, under porter's emulated {package} "
            f"(not compared with the {line} line's {spec or 'releases'})",
        )
    other = _other_build(rt, version)
    if other:
        return Result(
            "torch",
            FAIL,
            f"torch {version} is {other}: {package} needs {target.torch_needed}",
            install_fix(target.install_torch, target, table, line),
        )
    if spec and not admits(spec, version):
        return Result(
            "torch",
            FAIL,
            f"torch {version} is not a release of the {package} {line} line ({spec})",
            install_fix(target.install_torch, target, table, line),
        )
    return Result("torch", OK, f"torch {version} ({package} {line} line: {spec or 'no bound known'})")


def _other_build(rt: Runtime, version: str) -> str | None:
    """What says torch is built for another accelerator than a vendor package's (which needs
    the vendor's torch or the CPU build): its local label, else torch.version."""
    label = version.partition("+")[2]
    if re.match(r"cu\d", label):
        return "a CUDA build"
    if label.startswith("rocm"):
        return "a ROCm build"
    built = getattr(rt.torch, "version", None)
    cuda, hip = getattr(built, "cuda", None), getattr(built, "hip", None)
    if cuda:
        return f"a CUDA build (CUDA {cuda})"
    if hip:
        return f"a ROCm build (HIP {hip})"
    return None


def _build_torch(rt: Runtime, version: str, spec: str | None, table: PackageTable) -> Result:
    """torch on a target whose vendor side is torch's own build (ROCm)."""
    target = rt.spec
    assert target.build is not None
    build = rt.vendor_version
    cuda = getattr(rt.torch.version, "cuda", None)
    fix = install_fix(target.install_torch, target, table, "any")
    if not build:
        kind = f"a CUDA build (CUDA {cuda})" if cuda else "a CPU build"
        return Result("torch", FAIL, f"torch {version} is {kind}: it cannot drive {target.build.cards}", fix)
    if spec and not admits(spec, version):
        return Result(
            "torch", FAIL, f"torch {version} is not one of the releases that work on {target.build.name} ({spec})", fix
        )
    return Result("torch", OK, f"torch {version}, a {target.build.name} build ({target.build.attr.upper()} {build})")


def check_vendor(rt: Runtime, line: str, table: PackageTable | None = None) -> Result:
    target = rt.spec
    name = target.check_name
    if rt.torch is None:
        return Result(name, SKIP, "needs torch (see the torch check)")
    if target.build is not None:
        return _build_vendor(rt)
    module = f"torch.{rt.device_type}"
    torch_version = str(rt.torch.__version__)
    if rt.vendor_error is not None:
        return Result(name, FAIL, f"import {target.package} failed: {rt.vendor_error}", _import_fix(rt, table, line))
    version = rt.vendor_version
    built_for = vendor_line(version, rt.target)
    if not rt.emulated and built_for and built_for != torch_minor(torch_version):
        release = target.vendor_torch(version) or built_for
        return Result(
            name,
            FAIL,
            f"{target.package} {version} is built for torch {built_for}, but torch {torch_version} is installed",
            install_fix(target.install_pair, target, table, built_for, built_for=built_for, release=release),
        )
    if built_for and built_for != line:
        again = (
            f"Run porter convert and porter doctor with --target-version {built_for}"
            if built_for in known_lines(rt.target)
            else install_fix(target.install_line, target, table, line)
        )
        return Result(
            name,
            FAIL,
            f"{target.package} {version} is the {built_for} line; the checks are for the {line} line",
            again,
        )
    if not rt.vendor_ready():
        return Result(
            name,
            FAIL,
            f"{target.package} {version} imports, but {module}.is_available() is False",
            target.driver_fix.format(monitor=target.monitor_tool, visible=target.visible_variable),
        )
    what = "porter's emulator on the CPU" if rt.emulated else f"built for torch {built_for or 'an unknown line'}"
    return Result(name, OK, f"{target.package} {version} ({what}; line {line})")


def _import_fix(rt: Runtime, table: PackageTable | None, line: str) -> str:
    """Install the vendor package, or load its toolkit first where that is what it misses."""
    target = rt.spec
    fix = install_fix(target.install_vendor, target, table, line)
    missing = f"No module named '{target.package}'" in (rt.vendor_error or "")
    if target.toolkit is not None and not missing:
        from porter.doctor.toolkit import toolkit_home

        if toolkit_home(target.toolkit) is None:
            fix = f"{target.facts.toolkit_hint} (load {target.toolkit.name} first); if it still fails: {fix}"
    if target.porter_emulates:
        fix += f"; to try the port without cards: porter run --emulate {target.name} -- porter doctor"
    return fix


def _build_vendor(rt: Runtime) -> Result:
    """The vendor check where torch's own build is the vendor side (ROCm)."""
    target = rt.spec
    assert target.build is not None
    name, build = target.check_name, target.build
    if not rt.vendor_version:
        return Result(name, SKIP, f"needs a {build.name} build of torch (see the torch check)")
    module = f"torch.{rt.device_type}"
    if not rt.vendor_ready():
        return Result(
            name,
            FAIL,
            f"torch {rt.torch.__version__} is a {build.name} build, but {module}.is_available() is False",
            target.driver_fix.format(monitor=target.monitor_tool, visible=target.visible_variable),
        )
    return Result(name, OK, f"{build.attr.upper()} {rt.vendor_version}: {module} drives the cards")


def check_devices(rt: Runtime) -> Result:
    target = rt.spec
    if not rt.vendor_ready():
        return Result("devices", SKIP, f"needs {target.check_name} (see that check)")
    count = rt.device_count()
    if count == 0:
        return Result(
            "devices",
            FAIL,
            "no cards are visible" + _visible_now(target),
            f"Check the cards with {target.monitor_tool}, and {target.visible_variable}",
        )
    names = Counter(_device_name(rt, i) for i in range(count))
    listed = ", ".join(f"{n} x {name}" if n > 1 else name for name, n in names.items())
    return Result("devices", OK, f"{count} {rt.device_type} card{'s' if count > 1 else ''}: {listed}")


def _visible_now(target: DoctorTarget) -> str:
    """The visible-devices variable as it is set, for a message (empty when it is not set)."""
    value = os.environ.get(target.visible_variable)
    return f" ({target.visible_variable}={value!r})" if value is not None else ""


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
