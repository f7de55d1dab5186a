"""torch.mlu / torch.npu memory functions: host accounting kept by the extension's allocator.

Numbers are plausible rather than real: "reserved" is the allocated bytes rounded up to
2 MiB blocks (what a caching allocator would hold), and every device reports the memory of
the target's card (targets.py: 32 GiB for an MLU370, 64 GiB for an Ascend 910B).
"""

from __future__ import annotations

from typing import Any

from porter.emulator.targets import EmulatedDevice

_BLOCK = 2 * 1024**2


class Memory:
    def __init__(self, ext: Any, index: Any, device: EmulatedDevice) -> None:
        self._ext = ext
        self._device = device
        self._index = index  # device argument -> int
        self._peak_reserved: dict[int, int] = {}
        self.fraction = 1.0

    def memory_allocated(self, device=None) -> int:
        return int(self._ext.memory_allocated(self._index(device)))

    def max_memory_allocated(self, device=None) -> int:
        return int(self._ext.max_memory_allocated(self._index(device)))

    def memory_reserved(self, device=None) -> int:
        used = self.memory_allocated(device)
        reserved = -(-used // _BLOCK) * _BLOCK
        d = self._index(device)
        self._peak_reserved[d] = max(self._peak_reserved.get(d, 0), reserved)
        return reserved

    def max_memory_reserved(self, device=None) -> int:
        d = self._index(device)
        peak_alloc = -(-self.max_memory_allocated(d) // _BLOCK) * _BLOCK
        return max(self._peak_reserved.get(d, 0), peak_alloc, self.memory_reserved(d))

    def reset_peak_memory_stats(self, device=None) -> None:
        d = self._index(device)
        self._ext.reset_peak(d)
        self._peak_reserved[d] = 0

    def mem_get_info(self, device=None) -> tuple[int, int]:
        total = self._device.total_memory
        return total - self.memory_reserved(device), total

    def memory_stats(self, device=None) -> dict[str, int]:
        d = self._index(device)
        stats = {
            "allocated_bytes.all.current": self.memory_allocated(d),
            "allocated_bytes.all.peak": self.max_memory_allocated(d),
            "reserved_bytes.all.current": self.memory_reserved(d),
            "reserved_bytes.all.peak": self.max_memory_reserved(d),
            "active_bytes.all.current": self.memory_allocated(d),
            "active_bytes.all.peak": self.max_memory_allocated(d),
            "num_alloc_retries": 0,
            "num_ooms": 0,
        }
        return dict(sorted(stats.items()))

    def memory_summary(self, device=None, abbreviated: bool = False) -> str:
        lines = [f"|  porter emulated {self._device.label} memory summary, device {self._index(device)}  |"]
        lines += [f"|  {k:<32} {v:>16,}  |" for k, v in self.memory_stats(device).items()]
        return "\n".join(lines)

    def set_per_process_memory_fraction(self, fraction: float, device=None) -> None:
        if not 0 <= fraction <= 1:
            raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
        self.fraction = fraction
