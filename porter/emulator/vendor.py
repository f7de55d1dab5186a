"""The top level of an emulated vendor package: what `import torch_mlu` / `import torch_npu`
leave in the package besides torch.<device> (site/<target>/<package>/__init__.py calls load).

torch_npu holds its device module as `torch_npu.npu` too (Ascend's docs write torch_npu.npu.X
for every torch.cuda.X), and fused operators that libraries import from it when they find
torch_npu: transformers' integrations/npu_flash_attention.py imports npu_fusion_attention at
import time and calls it for flash_attention_2 (emulated: fused.py); LLaMA-Factory's kernel
plugins call npu_rms_norm, npu_swiglu, npu_rotary_mul, which exist here so that those
imports work, and say that they are not emulated when called.
"""

from __future__ import annotations

import sys
from typing import Any

import torch

from porter.emulator.runtime import install

_FUSED_OPS = {"npu": ("npu_rms_norm", "npu_swiglu", "npu_rotary_mul")}


def _not_emulated(api: str):
    def stub(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{api} is a fused operator of the vendor's; porter's emulator does not run it")

    stub.__name__ = api.rsplit(".", 1)[1]
    return stub


def load(name: str, package: str) -> dict[str, Any]:
    """Install the device `name` and return the names the package `package` holds."""
    module = install(name)
    version = module._porter_version or torch.__version__.split("+")[0]
    names: dict[str, Any] = {"__version__": f"emulated-{version}"}
    if name == "npu":
        names["npu"] = module
        sys.modules[f"{package}.npu"] = module
        for sub in ("amp", "memory", "random"):
            sys.modules[f"{package}.npu.{sub}"] = getattr(module, sub)
    for op in _FUSED_OPS.get(name, ()):
        names[op] = _not_emulated(f"{package}.{op}")
    if name == "npu":
        from porter.emulator.fused import npu_fusion_attention

        names["npu_fusion_attention"] = npu_fusion_attention
    return names
