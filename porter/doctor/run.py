"""A doctor run: import torch once, choose the target line, run every check in order."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass

from porter.doctor.builds import CUDA_ONLY, PAIRED, check_cuda_only, check_paired
from porter.doctor.hacks import check_renamed
from porter.doctor.installed import Installed
from porter.doctor.libraries import LIBRARIES, check_library
from porter.doctor.lines import choose_line, line_table
from porter.doctor.model import Result
from porter.doctor.process_group import check_process_group
from porter.doctor.runtime import Runtime, load_runtime
from porter.doctor.targets import DOCTOR_TARGETS
from porter.doctor.toolkit import check_toolkit
from porter.doctor.torch_checks import check_devices, check_dtype, check_torch, check_vendor, torch_to_pair


@dataclass(frozen=True)
class Doctored:
    target: str
    line: str
    results: list[Result]


def detect_target() -> str | None:
    """The target whose vendor package is importable (mlu: torch_mlu, npu: torch_npu), else one
    whose build torch is (hip: a ROCm build), else None."""
    for spec in DOCTOR_TARGETS.values():
        if spec.package is not None and importlib.util.find_spec(spec.package) is not None:
            return spec.name
    for spec in DOCTOR_TARGETS.values():
        if spec.build is not None and load_runtime(spec.name).vendor_version:
            return spec.name
    return None


def detect_hint() -> str:
    """What detect_target looked for, for the message when it found nothing."""
    packages = [s.package for s in DOCTOR_TARGETS.values() if s.package]
    builds = [s.build.name for s in DOCTOR_TARGETS.values() if s.build]
    imports = f"{packages[0]} does not import" if len(packages) == 1 else f"none of {', '.join(packages)} imports"
    return f"{imports} and torch is not a {' or '.join(builds)} build" if builds else imports


def run_doctor(
    target: str,
    requested_line: str | None = None,
    timeout: float = 120.0,
    runtime: Runtime | None = None,
    path: Sequence[str] | None = None,
) -> Doctored:
    """Every check for `target`; `runtime` and `path` (where distributions are looked for)
    may be given instead of this process's torch and sys.path."""
    rt = runtime if runtime is not None else load_runtime(target)
    line = choose_line(target, requested_line, rt)
    table = line_table(target, line)
    installed = Installed(path)
    torch_result = check_torch(rt, table, line)
    pair_with = torch_to_pair(rt, torch_result, table, line)
    toolkit = check_toolkit(rt)
    results = [
        torch_result,
        *([toolkit] if toolkit is not None else []),
        check_vendor(rt, line, table),
        check_devices(rt),
        check_dtype(rt, "fp16"),
        check_dtype(rt, "bf16"),
        check_process_group(rt, timeout),
        *(check_library(name, installed, table, target, line, rt.emulated) for name in LIBRARIES),
        *(check_paired(name, installed, rt, target, pair_with) for name in PAIRED),
        *(check_cuda_only(name, installed, table, target, line) for name in CUDA_ONLY),
        check_renamed(installed, table, target, line),
    ]
    return Doctored(target, line, results)
