"""Other vendors' accelerators, as torch (`torch.npu`) and device strings (`"npu"`) name them.

Code that reaches one (a `torch.xpu` call, an import under `if device == "npu":`) runs only
on that accelerator, never on the target porter ports to. "cuda" is not one of them: porter
renames it, and that code then runs on the target. The target's own device is not another's
either: for `--target npu`, `torch.npu` is the code that runs (and what the op table lists).
"""

from functools import lru_cache

ACCELERATORS = ("xpu", "mps", "npu", "mtia", "hpu", "mlu")


@lru_cache(maxsize=None)
def other_devices(target: str) -> tuple[str, ...]:
    """The accelerators whose code never runs on `target` (its own device excepted)."""
    return tuple(d for d in ACCELERATORS if d != target)
