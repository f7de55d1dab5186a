"""An emulated torch_mlu: run ported code on "mlu" devices backed by the CPU.

`porter run --emulate mlu` and `porter verify` start processes whose PYTHONPATH begins
with SITE_DIR, where a package named `torch_mlu` lives; importing it builds (once, cached)
and loads a small C++ PrivateUse1 extension and registers `torch.mlu`. The package is
never installed as a site package: only processes porter starts can see it.

This module imports neither torch nor porter's engine: `porter convert` and `check` stay
free of torch.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SITE_DIR = Path(__file__).with_name("site")
# Configuration of the emulated package, read by it at import time.
ENV_VERSION = "PORTER_EMULATE_VERSION"
ENV_DEVICES = "PORTER_EMULATE_DEVICES"


def environment(
    devices: int | None = None, version: str | None = None, base: dict | None = None, own_devices: bool = False
) -> dict[str, str]:
    """The environment of a process that runs under the emulator. `own_devices`: ignore the
    caller's MLU_VISIBLE_DEVICES (porter verify chooses the device count itself)."""
    env = dict(os.environ if base is None else base)
    if own_devices:
        env.pop("MLU_VISIBLE_DEVICES", None)
    porter_root = str(Path(__file__).resolve().parents[2])  # this porter, wherever it is installed
    paths = [str(SITE_DIR), porter_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
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
