"""The torch of this machine and its vendor extension, imported once for the checks that
need them. Nothing here runs at import time: porter's other commands never load torch."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from porter.doctor.targets import DoctorTarget, doctor_target, torch_minor

EMULATED_PREFIX = "emulated-"  # the vendor package's __version__ under porter's emulator: "emulated-2.4"


@dataclass
class Runtime:
    """torch (the module, or why it did not import) and the vendor side: the vendor package's
    version (torch_mlu, torch_npu), or torch's own build version (torch.version.hip on hip)."""

    target: str
    torch: Any = None
    torch_error: str | None = None
    vendor_version: str | None = None
    vendor_error: str | None = None

    @property
    def spec(self) -> DoctorTarget:
        """What doctor knows about the target (porter/doctor/targets.py)."""
        return doctor_target(self.target)

    @property
    def device_type(self) -> str:
        """The device type tensors go to: mlu, npu, or cuda on ROCm (HIP keeps CUDA's names)."""
        return self.spec.device_type

    @property
    def devices(self) -> Any:
        """torch.mlu, torch.npu or torch.cuda (None without torch)."""
        return getattr(self.torch, self.device_type, None) if self.torch is not None else None

    @property
    def backend(self) -> str:
        return self.spec.backend

    @property
    def emulated(self) -> bool:
        """The vendor package is porter's emulated one (porter run --emulate)."""
        return self.spec.package is not None and (self.vendor_version or "").startswith(EMULATED_PREFIX)

    def vendor_ready(self) -> bool:
        """torch and the vendor side import, and the device module says cards are there."""
        if self.torch is None or self.vendor_error is not None or self.devices is None:
            return False
        if self.spec.build is not None and not self.vendor_version:
            return False
        try:
            return bool(self.devices.is_available())
        except Exception:  # a broken driver raises here on some releases
            return False

    def device_count(self) -> int:
        try:
            return int(self.devices.device_count()) if self.vendor_ready() else 0
        except Exception:
            return 0


def load_runtime(target: str) -> Runtime:
    """Import torch, and the vendor package (torch_mlu, torch_npu) where the target has one;
    every failure is kept as text, never raised."""
    spec = doctor_target(target)
    try:
        import torch
    except Exception as exc:  # ImportError, or an OSError of a broken build
        return Runtime(target, torch_error=error_text(exc))
    if spec.build is not None:
        return Runtime(target, torch, vendor_version=getattr(torch.version, spec.build.attr, None))
    assert spec.package is not None
    try:
        vendor = importlib.import_module(spec.package)
    except (Exception, SystemExit) as exc:  # torch_npu without CANN's libraries; an emulator refusing its variables
        return Runtime(target, torch, vendor_error=error_text(exc))
    return Runtime(target, torch, vendor_version=str(getattr(vendor, "__version__", "unknown")))


def vendor_line(version: str | None, target: str) -> str | None:
    """The torch line a vendor package release is built for: torch_mlu "1.24.1-torch2.4.0" ->
    "2.4", torch_npu "2.8.0.post2" -> "2.8", porter's "emulated-2.4" -> "2.4"; None when its
    version does not say."""
    if not version:
        return None
    if version.startswith(EMULATED_PREFIX):
        return torch_minor(version[len(EMULATED_PREFIX) :])
    return torch_minor(doctor_target(target).vendor_torch(version))


def error_text(exc: BaseException, limit: int = 300) -> str:
    """One line: the exception's type and its first line of text."""
    text = str(exc).strip().splitlines()
    line = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    return line if len(line) <= limit else line[: limit - 3] + "..."
