"""Emulated vendor packages: run ported code on "mlu" or "npu" devices backed by the CPU.

`porter run --emulate mlu|npu` and `porter verify` start processes whose PYTHONPATH begins
with the target's site folder (site_dir), where a package named `torch_mlu` (`torch_npu`)
lives; importing it builds (once, cached) and loads a small C++ PrivateUse1 extension and
registers `torch.mlu` (`torch.npu`). Each target has a folder of its own, so that a process
sees one vendor package only: transformers imports every one it finds, and PrivateUse1 takes
one name per process. The packages are never installed as site packages: only processes
porter starts can see them.

This module imports neither torch nor porter's engine: `porter convert` and `check` stay
free of torch.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from porter.emulator.targets import DEVICES, emulated

_SITE = Path(__file__).with_name("site")
# Configuration of the emulated package, read by it at import time.
ENV_VERSION = "PORTER_EMULATE_VERSION"
ENV_DEVICES = "PORTER_EMULATE_DEVICES"


def site_dir(target: str = "mlu") -> Path:
    """The folder holding the emulated vendor package of `target`."""
    return _SITE / emulated(target).name


def environment(
    devices: int | None = None,
    version: str | None = None,
    base: dict | None = None,
    own_devices: bool = False,
    target: str = "mlu",
) -> dict[str, str]:
    """The environment of a process that runs under the emulator of `target`. `own_devices`:
    ignore the caller's visible-devices variable (porter verify chooses the device count)."""
    env = dict(os.environ if base is None else base)
    if own_devices:
        env.pop(emulated(target).visible_variable, None)
    porter_root = str(Path(__file__).resolve().parents[2])  # this porter, wherever it is installed
    # Another target's site folder, from a caller that runs under the emulator itself, goes.
    others = {str(_SITE / name) for name in DEVICES if name != target}
    inherited = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p not in others]
    paths = [str(site_dir(target)), porter_root] + inherited
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    # `python` and `torchrun` in the command mean porter's own interpreter: the extension is
    # compiled against the torch installed beside it.
    bindir = os.path.dirname(sys.executable)
    env["PATH"] = os.pathsep.join(dict.fromkeys([bindir] + [p for p in env.get("PATH", "").split(os.pathsep) if p]))
    if devices is not None:
        env[ENV_DEVICES] = str(devices)
    if version is not None:
        env[ENV_VERSION] = version
    return env
