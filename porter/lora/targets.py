"""Facts about each target that the LoRA entry point is rendered from.

Everything the templates need to know about a target lives here, in one frozen record
per target, so that no template hard-codes a device string, backend or variable name.
Sources: Cambricon/torch_mlu (torch_mlu/__init__.py: the "mlu" device, torch.mlu, the "cncl"
backend; torch_mlu/utils/gpu_migration/env_migration.py: environment variables), the
PyTorch ROCm notes (docs/source/notes/hip.rst: ROCm keeps torch.cuda, "cuda" and "nccl"), and
Ascend/pytorch (torch_npu/_init/registry/backend.py and distributed.py: "npu", torch.npu,
"hccl"; torch_npu/npu/__init__.py: ASCEND_RT_VISIBLE_DEVICES; torch_npu/npu/utils.py:
is_bf16_supported; README: CANN's set_env.sh).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True)
class TargetFacts:
    """What a rendered training entry point needs to know about one target."""

    name: str
    """porter's target name, as given to ``--target``."""
    display_name: str
    device_type: str
    """The torch device type: torch_mlu registers "mlu"; ROCm keeps "cuda" on purpose."""
    device_module: str
    """The torch attribute mirroring ``torch.cuda`` for this device (``torch.<x>``)."""
    vendor_import: str | None
    """A module that must be imported before the device exists (torch_mlu), if any."""
    vendor_install_hint: str | None
    """What to install when vendor_import fails, for the entry point's error message."""
    device_reason: str
    backend: str
    """torch.distributed backend for the device: CNCL on MLU, NCCL (RCCL) on ROCm."""
    backend_reason: str
    visible_devices_var: str
    visible_devices_note: str | None
    """A caution about the visible-devices variable, for the launch scripts."""
    monitor_tool: str
    toolkit_hint: str | None
    """Shell line that sets up the vendor toolkit, when the target needs one."""
    toolkit_template: str | None
    """The launch scripts' block that runs toolkit_hint (porter/templates/lora/_toolkit_*.sh.j2)."""
    toolkit_note: str | None
    """The README's sentence on setting up the toolkit."""
    default_precision: str
    """Precision written into static configs, which cannot probe the device."""
    precision_reason: str
    lf_precision_note: str
    """Why the LLaMA-Factory config holds default_precision, and when to change it by hand."""
    attention: str
    """transformers ``attn_implementation`` used by default."""
    attention_reason: str
    deepspeed_package: str
    """Where DeepSpeed comes from on this target (the import name stays ``deepspeed``)."""
    trainer_note: str | None
    """What a transformers Trainer (LLaMA-Factory) needs on this target, if anything."""
    device_setup: str | None = None
    """A Python statement train_lora.py runs once the device is chosen, if the target wants one."""
    device_setup_reason: str | None = None
    bf16_arch_prefixes: tuple[str, ...] = ()
    """ROCm ``gcnArchName`` prefixes with native bf16; empty where the runtime check is trusted."""
    hub_kernels_know_device: bool = True
    """Whether Hugging Face's `kernels` library takes this device type. transformers 5.25 made
    it a dependency and kernelizes every model it loads by default; `model.train()` then fails
    on a device it does not list (kernels 0.19: cpu, cuda, mps, neuron, npu, rocm, tpu, xpu):
    "ValueError: Unsupported device type 'mlu'". Where False, the entry point turns hub
    kernels off (USE_HUB_KERNELS=0, transformers/integrations/hub_kernels.py) unless the
    user set the variable."""


MLU = TargetFacts(
    name="mlu",
    hub_kernels_know_device=False,
    display_name="Cambricon MLU (torch_mlu)",
    device_type="mlu",
    device_module="mlu",
    vendor_import="torch_mlu",
    vendor_install_hint="Install the Cambricon PyTorch build that matches your torch.",
    device_reason=(
        "`import torch_mlu` registers the `mlu` device and `torch.mlu`; without it `--device mlu` stops with an error"
    ),
    backend="cncl",
    backend_reason="Cambricon's collective library, registered for the `mlu` device",
    visible_devices_var="MLU_VISIBLE_DEVICES",
    visible_devices_note=None,
    monitor_tool="cnmon",
    toolkit_hint=None,
    toolkit_template=None,
    toolkit_note=None,
    default_precision="bf16",
    precision_reason=(
        "torch_mlu autocasts to both fp16 and bf16 and bf16 needs no loss scaling; "
        "train_lora.py falls back to fp16 when torch.mlu.is_bf16_supported() is False"
    ),
    lf_precision_note=(
        "used as written (LLaMA-Factory does not switch precision itself): on cards where "
        "torch.mlu.is_bf16_supported() is False, write fp16: true instead"
    ),
    attention="eager",
    attention_reason=(
        "FlashAttention exists for MLU only as a vendor build and MLU300 cards have no "
        "fused attention, so the plain attention path is the one that always runs"
    ),
    deepspeed_package="deepspeed-mlu",
    trainer_note=(
        "the Trainer inside needs a transformers release that knows the MLU "
        "(is_torch_mlu_available, 2024 on) or Cambricon's build of it"
    ),
)

HIP = TargetFacts(
    name="hip",
    display_name="Hygon DCU / AMD ROCm",
    device_type="cuda",
    device_module="cuda",
    vendor_import=None,
    vendor_install_hint=None,
    device_reason=(
        "ROCm builds of PyTorch keep the `cuda` device and `torch.cuda` on purpose; `hip` is no device string"
    ),
    backend="nccl",
    backend_reason="the NCCL name stays on ROCm, where RCCL implements it",
    visible_devices_var="HIP_VISIBLE_DEVICES",
    visible_devices_note=("Do not also set ROCR_VISIBLE_DEVICES: the two masks combine and can hide every card."),
    monitor_tool="hy-smi",
    toolkit_hint="source ${DTK}/env.sh",
    toolkit_template="_toolkit_dtk.sh.j2",
    toolkit_note="On Hygon DCU set `DTK` to the toolkit directory (or run `source ${DTK}/env.sh` first).",
    default_precision="fp16",
    precision_reason=(
        "torch.cuda.is_bf16_supported() answers True on every ROCm build, also on parts "
        "without native bf16 (DCU Z100, gfx906), so fp16 is the default that runs everywhere; "
        "train_lora.py uses bf16 only on architectures known to have it"
    ),
    lf_precision_note=(
        "runs on every ROCm/DCU part, some of which lack native bf16 (DCU Z100, gfx906); "
        "on cards that have it (MI200/MI300, K100-AI), bf16: true instead also works"
    ),
    attention="sdpa",
    attention_reason=(
        "flash-attn needs a ROCm/DTK build with head-size limits; PyTorch's SDPA is the portable fallback"
    ),
    deepspeed_package="a ROCm/DTK build of deepspeed",
    trainer_note=None,
    # gfx90a (MI200), gfx94x/95x (MI300/MI350), RDNA3/4, and the DCU parts documented with
    # bf16 (K100-AI gfx928, BW gfx936). Extend this list for other cards.
    bf16_arch_prefixes=("gfx90a", "gfx94", "gfx95", "gfx11", "gfx12", "gfx928", "gfx936"),
)

NPU = TargetFacts(
    name="npu",
    display_name="Huawei Ascend NPU (torch_npu)",
    device_type="npu",
    device_module="npu",
    vendor_import="torch_npu",
    vendor_install_hint="Install torch-npu for your torch version and load CANN (its set_env.sh).",
    device_reason=(
        "`import torch_npu` registers the `npu` device and `torch.npu` (torch_npu 2.5.1 and newer also "
        "load with torch; the explicit import works on every release)"
    ),
    backend="hccl",
    backend_reason="Huawei's collective library (HCCL), registered for the `npu` device",
    visible_devices_var="ASCEND_RT_VISIBLE_DEVICES",
    visible_devices_note="torch_npu takes card numbers separated by commas there, nothing else.",
    monitor_tool="npu-smi info",
    toolkit_hint="source /usr/local/Ascend/ascend-toolkit/set_env.sh",
    toolkit_template="_toolkit_cann.sh.j2",
    toolkit_note=(
        "The launch scripts load CANN (`source /usr/local/Ascend/ascend-toolkit/set_env.sh`) when "
        "ASCEND_TOOLKIT_HOME says it is not loaded yet (Ascend's containers load it)."
    ),
    default_precision="bf16",
    precision_reason=(
        "torch_npu autocasts to both fp16 and bf16 and bf16 needs no loss scaling; "
        "train_lora.py falls back to fp16 when torch.npu.is_bf16_supported() is False"
    ),
    lf_precision_note=(
        "used as written (LLaMA-Factory does not switch precision itself, and transformers "
        "refuses bf16 where torch.npu.is_bf16_supported() is False): on such cards write fp16: true instead"
    ),
    attention="sdpa",
    attention_reason=(
        "torch_npu runs F.scaled_dot_product_attention on Atlas A2/A3; the flash-attn package does not "
        "exist for NPU (transformers maps flash_attention_2 to torch_npu.npu_fusion_attention instead)"
    ),
    deepspeed_package="upstream deepspeed, whose NPU accelerator is chosen when torch_npu imports",
    trainer_note=None,
    device_setup="torch.npu.set_compile_mode(jit_compile=False)",
    device_setup_reason="Prebuilt kernels: compiling operators per shape is slow (LLaMA-Factory's NPU default)",
)

TARGETS: Mapping[str, TargetFacts] = MappingProxyType({t.name: t for t in (MLU, HIP, NPU)})


def target_facts(target: str) -> TargetFacts:
    """Return the facts for ``target`` ("mlu", "hip" or "npu"); raise ValueError for others."""
    try:
        return TARGETS[target]
    except KeyError:
        known = ", ".join(sorted(TARGETS))
        raise ValueError(f"unknown target {target!r}; expected one of: {known}") from None
