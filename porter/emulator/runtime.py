"""Install an emulated device into this process's torch: what `import torch_mlu` (or
`import torch_npu`) does. The device's name is the only difference between the two."""

from __future__ import annotations

import os
import sys
import types

import torch

from porter.emulator import ENV_DEVICES, ENV_VERSION, apis
from porter.emulator.targets import EmulatedDevice, emulated


def device_count_from_env(device: EmulatedDevice) -> int:
    """Visible emulated devices, as on a real machine: porter's --devices is how many cards
    the machine has (default: enough for the visible-devices variable, else 1), and that
    variable (MLU_VISIBLE_DEVICES, ASCEND_RT_VISIBLE_DEVICES), when set, selects among them."""
    raw = os.environ.get(ENV_DEVICES)
    try:
        cards = int(raw) if raw else None
    except ValueError:
        raise SystemExit(f"porter emulator: {ENV_DEVICES}={raw!r} is not a number of devices") from None
    var = device.visible_variable
    visible = os.environ.get(var)
    if visible is None:
        return 1 if cards is None else cards
    try:
        picked = [int(d) for d in visible.split(",") if d.strip()]
    except ValueError:
        raise SystemExit(f"porter emulator: {var}={visible!r} is not a list of card numbers") from None
    if cards is None:
        return len(picked)
    return len([d for d in picked if 0 <= d < cards])


def install(name: str) -> types.ModuleType:
    """Register the device `name` ("mlu", "npu") in torch once; return torch.<name>."""
    existing = getattr(torch, name, None)
    if existing is not None:
        return existing
    device = emulated(name)
    other = torch._C._get_privateuse1_backend_name()
    if other not in ("privateuseone", name):
        # PrivateUse1 takes one name per process, as the real packages find too.
        raise ImportError(f"{device.package} (emulated by porter) cannot load: this process already has {other}")
    from porter.emulator import collectives, device as device_module
    from porter.emulator.build import load_extension

    version = os.environ.get(ENV_VERSION) or apis.default_version(name)
    if version is not None:
        apis.listed(version, name)  # fails early, naming the versions known
    ext = load_extension()
    ext.set_device_count(device_count_from_env(device))
    ext.set_visible_variable(device.visible_variable)
    ext.register_hooks()
    torch.utils.rename_privateuse1_backend(name)
    module = device_module.build_module(ext, version, device)
    torch._register_device_module(name, module)
    sys.modules[f"torch.{name}"] = module
    for sub in ("amp", "memory", "random"):
        sys.modules[f"torch.{name}.{sub}"] = getattr(module, sub)
    torch.utils.generate_methods_for_privateuse1_backend(for_storage=True)
    # Backward runs on the calling thread: the autograd device thread otherwise outlives
    # the interpreter and aborts at exit ("terminate called without an active exception").
    torch._C._set_multithreading_enabled(False)
    collectives.register(ext, device)
    if name == "mlu":
        _mlu_backends()
    return module


def _mlu_backends() -> None:
    """torch.backends.cnnl / torch.backends.mlu: the flags ported code sets (porter's rules
    rewrite cudnn.allow_tf32 and cuda.matmul.allow_tf32 to these). torch_npu has none: it
    accepts torch.backends.cuda's and cudnn's flags as they are."""
    cnnl = types.ModuleType("torch.backends.cnnl")
    cnnl.allow_tf32 = True
    cnnl.enabled = True
    mlu = types.ModuleType("torch.backends.mlu")
    mlu.matmul = types.SimpleNamespace(allow_tf32=False)
    torch.backends.cnnl = cnnl
    torch.backends.mlu = mlu
    sys.modules["torch.backends.cnnl"] = cnnl
    sys.modules["torch.backends.mlu"] = mlu
