"""Install the emulated MLU into this process's torch: what `import torch_mlu` does."""

from __future__ import annotations

import os
import sys

import torch

from porter.emulator import ENV_DEVICES, ENV_VERSION, apis


def device_count_from_env() -> int:
    """Visible emulated devices, as on a real machine: porter's --devices is how many cards
    the machine has (default: enough for MLU_VISIBLE_DEVICES, else 1), and
    MLU_VISIBLE_DEVICES, when set, selects among them."""
    raw = os.environ.get(ENV_DEVICES)
    try:
        cards = int(raw) if raw else None
    except ValueError:
        raise SystemExit(f"porter emulator: {ENV_DEVICES}={raw!r} is not a number of devices") from None
    visible = os.environ.get("MLU_VISIBLE_DEVICES")
    if visible is None:
        return 1 if cards is None else cards
    try:
        picked = [int(d) for d in visible.split(",") if d.strip()]
    except ValueError:
        raise SystemExit(f"porter emulator: MLU_VISIBLE_DEVICES={visible!r} is not a list of card numbers") from None
    if cards is None:
        return len(picked)
    return len([d for d in picked if 0 <= d < cards])


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
