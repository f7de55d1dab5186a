"""Install the emulated MLU into this process's torch: what `import torch_mlu` does."""

from __future__ import annotations

import os
import sys

import torch

from porter.emulator import ENV_DEVICES, ENV_VERSION, apis


def device_count_from_env() -> int:
    """MLU_VISIBLE_DEVICES wins (as on hardware), else porter's --devices, else 1."""
    visible = os.environ.get("MLU_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip()])
    raw = os.environ.get(ENV_DEVICES, "1")
    try:
        return int(raw)
    except ValueError:
        raise SystemExit(f"porter emulator: {ENV_DEVICES}={raw!r} is not a number of devices") from None


def install():
    """Register "mlu" in torch once; return the torch.mlu module."""
    existing = getattr(torch, "mlu", None)
    if existing is not None:
        return existing
    from porter.emulator import cncl, device
    from porter.emulator.build import load_extension

    version = os.environ.get(ENV_VERSION) or apis.DEFAULT_VERSION
    apis.listed(version)  # fails early, naming the versions known
    ext = load_extension()
    ext.set_device_count(device_count_from_env())
    ext.register_hooks()
    torch.utils.rename_privateuse1_backend("mlu")
    module = device.build_module(ext, version)
    torch._register_device_module("mlu", module)
    sys.modules["torch.mlu"] = module
    sys.modules["torch.mlu.amp"] = module.amp
    sys.modules["torch.mlu.memory"] = module.memory
    sys.modules["torch.mlu.random"] = module.random
    torch.utils.generate_methods_for_privateuse1_backend(for_storage=True)
    # Backward runs on the calling thread: the autograd device thread otherwise outlives
    # the interpreter and aborts at exit ("terminate called without an active exception").
    torch._C._set_multithreading_enabled(False)
    cncl.register(ext)
    _backends(version)
    return module


def _backends(version: str) -> None:
    """torch.backends.cnnl / torch.backends.mlu: the flags ported code sets (porter's rules
    rewrite cudnn.allow_tf32 and cuda.matmul.allow_tf32 to these)."""
    import types

    cnnl = types.ModuleType("torch.backends.cnnl")
    cnnl.allow_tf32 = True
    cnnl.enabled = True
    mlu = types.ModuleType("torch.backends.mlu")
    mlu.matmul = types.SimpleNamespace(allow_tf32=False)
    torch.backends.cnnl = cnnl
    torch.backends.mlu = mlu
    sys.modules["torch.backends.cnnl"] = cnnl
    sys.modules["torch.backends.mlu"] = mlu
