"""Builds for another machine: torchvision/torchaudio compiled for CUDA or for another torch,
and CUDA-only packages (flash-attn, bitsandbytes) installed on the target."""

from __future__ import annotations

import importlib
import re

from porter.doctor.installed import Dist, Installed
from porter.doctor.libraries import judge
from porter.doctor.model import FAIL, OK, SKIP, Result
from porter.doctor.runtime import Runtime, error_text
from porter.doctor.targets import torch_minor
from porter.doctor.targets import doctor_target
from porter.tables.packages import PackageTable
from porter.tables.plain_requirement import canonical_name
from porter.tables.torch_pairs import pair_for

PAIRED = ("torchvision", "torchaudio")
CUDA_ONLY = ("flash-attn", "bitsandbytes")
# Files only a CUDA (or hipified ROCm) build of a package has.
CUDA_FILES = {"flash-attn": re.compile(r"(^|/)flash_attn_2_cuda[^/]*$")}


def cuda_build(dist: Dist, target: str) -> str | None:
    """Why `dist` is a build for NVIDIA's CUDA (or, where the target is not ROCm, for ROCm), as
    a predicate ("is a CUDA build (+cu121)"); None when nothing says so."""
    rocm_builds = doctor_target(target).rocm_builds
    label = dist.local_label
    if re.match(r"cu\d", label):
        return f"is a CUDA build (+{label})"
    if not rocm_builds and label.startswith("rocm"):
        return f"is a ROCm build (+{label})"
    nvidia = [r for r in map(_requirement_name, dist.requires) if r.startswith("nvidia-")]
    if nvidia:
        return f"requires {nvidia[0]} (NVIDIA's CUDA libraries)"
    pattern = CUDA_FILES.get(dist.name)
    # A ROCm build of flash-attn holds flash_attn_2_cuda too (hipified): no evidence there.
    if not rocm_builds and pattern and any(pattern.search(path) for path in dist.record):
        return "holds a CUDA extension (flash_attn_2_cuda)"
    return None


def _requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return canonical_name(match.group(1)) if match else ""


def check_paired(name: str, installed: Installed, rt: Runtime, target: str, torch_version: str | None) -> Result:
    """torchvision or torchaudio: not a CUDA build, the release that pairs with `torch_version`
    (the installed torch, or the line's where the installed one is wrong), and it imports."""
    dist = installed.find(name)
    if dist is None:
        return Result(name, SKIP, "not installed")
    pair = pair_for(torch_version) if torch_version else None
    paired = getattr(pair, name, None) if pair else None
    fix = _reinstall(name, paired, torch_version, target, pair is not None)
    why = cuda_build(dist, target)
    if why:
        return Result(
            name,
            FAIL,
            f"{name} {dist.version} {why}: it does not load with the {target} torch, and pip installs "
            f"a CUDA torch with it",
            fix,
        )
    if pair is not None and torch_minor(paired) != torch_minor(dist.version):
        pairs = f"pairs with {name} {paired}" if paired else f"has no {name} release"
        return Result(
            name, FAIL, f"{name} {dist.version} is built for another torch: torch {torch_version} {pairs}", fix
        )
    if rt.torch is None:
        return Result(name, OK, f"{name} {dist.version} (not imported: no torch)")
    installed_torch = rt.torch.__version__
    try:
        importlib.import_module(name)
    except Exception as exc:  # undefined symbols of another torch: OSError, ImportError, RuntimeError
        return Result(
            name, FAIL, f"{name} {dist.version} does not import with torch {installed_torch}: {error_text(exc)}", fix
        )
    return Result(name, OK, f"{name} {dist.version} imports with torch {installed_torch}")


def _reinstall(name: str, paired: str | None, torch_version: str | None, target: str, known: bool) -> str:
    if known and paired is None:
        return f"pip uninstall -y {name} (no {name} release pairs with torch {torch_version})"
    spec = doctor_target(target)
    pin = f"{name}=={paired}" if paired else name
    command = f"pip uninstall -y {name} && pip install {pin} --index-url {spec.index()} --no-deps"
    if paired is None:
        command += f" (choose the {name} release that pairs with torch {torch_version or 'the installed torch'})"
    return command + spec.reinstall_note.format(name=name)


def check_cuda_only(name: str, installed: Installed, table: PackageTable, target: str, line: str) -> Result:
    """flash-attn, bitsandbytes: a CUDA build fails; otherwise what the table says of them on
    the line (dropped, outside the releases that work, flagged)."""
    dist = installed.find(name)
    if dist is None:
        return Result(name, OK, "not installed")
    why = cuda_build(dist, target)
    if why is None:
        return judge(name, dist, table, target, line)
    entry = table.by_distribution(dist.name)
    fix = f"pip uninstall -y {dist.name}" + (f"; {entry.suggestion}" if entry and entry.suggestion else "")
    return Result(name, FAIL, f"{dist.name} {dist.version} {why}: its kernels do not run on {target}", fix)
