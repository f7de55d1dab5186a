"""The torch of this machine and its vendor extension, imported once for the checks that
need them. Nothing here runs at import time: porter's other commands never load torch."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

EMULATED_PREFIX = "emulated-"  # torch_mlu.__version__ of porter's emulator: "emulated-2.4"


@dataclass
class Runtime:
    """torch (the module, or why it did not import) and the vendor side: torch_mlu's version on
    mlu, torch.version.hip on hip."""

    target: str
    torch: Any = None
    torch_error: str | None = None
    vendor_version: str | None = None
    vendor_error: str | None = None

    @property
    def device_type(self) -> str:
        """The device type tensors go to: mlu, or cuda on ROCm (HIP keeps CUDA's names)."""
        return "mlu" if self.target == "mlu" else "cuda"

    @property
    def devices(self) -> Any:
        """torch.mlu or torch.cuda (None without torch)."""
        return getattr(self.torch, self.device_type, None) if self.torch is not None else None

    @property
    def backend(self) -> str:
        return "cncl" if self.target == "mlu" else "nccl"

    @property
    def emulated(self) -> bool:
        return self.target == "mlu" and (self.vendor_version or "").startswith(EMULATED_PREFIX)

    def vendor_ready(self) -> bool:
        """torch and the vendor side import, and the device module says cards are there."""
        if self.torch is None or self.vendor_error is not None or self.devices is None:
            return False
        if self.target == "hip" and not self.vendor_version:
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
    """Import torch, and torch_mlu on mlu; every failure is kept as text, never raised."""
    try:
        import torch
    except Exception as exc:  # ImportError, or an OSError of a broken build
        return Runtime(target, torch_error=error_text(exc))
    if target != "mlu":
        return Runtime(target, torch, vendor_version=getattr(torch.version, "hip", None))
    try:
        import torch_mlu
    except Exception as exc:
        return Runtime(target, torch, vendor_error=error_text(exc))
    return Runtime(target, torch, vendor_version=str(getattr(torch_mlu, "__version__", "unknown")))


def torch_minor(version: str | None) -> str | None:
    """ "2.4" of "2.4.1+cpu"."""
    match = re.match(r"\s*(\d+)\.(\d+)", version or "")
    return f"{match.group(1)}.{match.group(2)}" if match else None


def vendor_line(version: str | None) -> str | None:
    """The torch line a torch_mlu release is built for: "1.24.1-torch2.4.0" -> "2.4",
    porter's "emulated-2.4" -> "2.4"; None when its version does not say."""
    if not version:
        return None
    if version.startswith(EMULATED_PREFIX):
        return torch_minor(version[len(EMULATED_PREFIX) :])
    match = re.search(r"torch(\d+\.\d+)", version)
    return match.group(1) if match else None


def error_text(exc: BaseException, limit: int = 300) -> str:
    """One line: the exception's type and its first line of text."""
    text = str(exc).strip().splitlines()
    line = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    return line if len(line) <= limit else line[: limit - 3] + "..."
