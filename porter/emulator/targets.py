"""The devices the emulator can pretend to be: one record per vendor package.

Every emulated target is the same CPU-backed PrivateUse1 device (csrc/privateuse1.cpp) under
another name; what differs is data, kept here: the device and package names, the variable
that selects cards, the process-group backend and the reductions it lacks, the card the
properties describe, and the names of the vendor's own classes. Sources: Cambricon/torch_mlu
(torch_mlu/__init__.py, "cncl"), Ascend/pytorch (torch_npu/_init/registry/backend.py and
distributed.py: "npu", "hccl"; torch_npu/npu/__init__.py: ASCEND_RT_VISIBLE_DEVICES) and the
torch_npu API list (docs/zh/api/native_api/pytorch_2-13-0/torch-cuda.md, torch-distributed.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True)
class EmulatedDevice:
    name: str
    """The torch device type and porter's target name: "mlu", "npu"."""
    package: str
    """The vendor package that registers the device when imported: torch_mlu, torch_npu."""
    vendor: str
    """How messages name the vendor's build: "Cambricon", "Ascend"."""
    visible_variable: str
    """The variable that selects cards (the vendor's CUDA_VISIBLE_DEVICES)."""
    backend: str
    """The torch.distributed backend registered for the device (the vendor's NCCL)."""
    unsupported_reductions: frozenset[str]
    """ReduceOp names the vendor's collective library refuses."""
    card: str
    """The card get_device_properties describes."""
    total_memory: int
    """Bytes each emulated card reports (mem_get_info, get_device_properties)."""
    capability: tuple[int, int] | None
    """What get_device_capability answers; None where the vendor answers None."""
    capability_variable: str | None
    """A variable whose "major.minor" replaces that answer, where the vendor reads one."""
    properties: tuple[tuple[str, object], ...]
    """get_device_properties' fields besides name and total_memory, in the vendor's order."""
    graph_class: str
    """The vendor's CUDAGraph (listed, not emulated)."""
    pluggable_allocator: str
    """The vendor's CUDAPluggableAllocator (listed, not emulated)."""

    @property
    def label(self) -> str:
        """The device in capitals, as the vendors write it in messages: MLU, NPU."""
        return self.name.upper()


MLU = EmulatedDevice(
    name="mlu",
    package="torch_mlu",
    vendor="Cambricon",
    visible_variable="MLU_VISIBLE_DEVICES",
    backend="cncl",
    unsupported_reductions=frozenset({"BAND", "BOR", "BXOR", "PREMUL_SUM"}),
    card="MLU370-X8",
    total_memory=32 * 1024**3,
    capability=(3, 0),
    capability_variable=None,
    properties=(("major", 3), ("minor", 0), ("multi_processor_count", 64)),
    graph_class="MLUGraph",
    pluggable_allocator="MLUPluggableAllocator",
)

# HCCL reduces with SUM, PROD, MAX and MIN; ReduceOp.AVG is not supported (torch_npu's
# torch-distributed.md; LLaMA-Factory divides a SUM instead).
NPU = EmulatedDevice(
    name="npu",
    package="torch_npu",
    vendor="Ascend",
    visible_variable="ASCEND_RT_VISIBLE_DEVICES",
    backend="hccl",
    unsupported_reductions=frozenset({"AVG", "BAND", "BOR", "BXOR", "PREMUL_SUM"}),
    card="Ascend910B2",
    total_memory=64 * 1024**3,
    # torch_npu.npu.get_device_capability() answers None unless TORCH_NPU_DEVICE_CAPABILITY
    # says "major.minor" (Ascend/pytorch docs/zh/api/environment_variable/device_management/
    # TORCH_NPU_DEVICE_CAPABILITY.md): code that indexes the answer fails there, and here too.
    capability=None,
    capability_variable="TORCH_NPU_DEVICE_CAPABILITY",
    # torch_npu fills only name, total_memory, L2_cache_size, cube_core_num and vector_core_num;
    # CUDA's other fields are empty (torch-cuda.md, get_device_properties). The core counts
    # and cache size are an Atlas A2 card's order of size, not a measurement.
    properties=(
        ("L2_cache_size", 192 * 1024**2),
        ("cube_core_num", 24),
        ("vector_core_num", 48),
        ("major", None),
        ("minor", None),
        ("multi_processor_count", None),
    ),
    graph_class="NPUGraph",
    pluggable_allocator="NPUPluggableAllocator",
)

DEVICES: Mapping[str, EmulatedDevice] = MappingProxyType({d.name: d for d in (MLU, NPU)})


def emulated(name: str) -> EmulatedDevice:
    """The device record for a target; ValueError naming the ones there are."""
    try:
        return DEVICES[name]
    except KeyError:
        raise ValueError(f"porter does not emulate {name!r} (it emulates: {', '.join(DEVICES)})") from None
