"""The LoRA training entry point porter renders for a ported tree (``OUT/porter_lora/``).

Names are loaded on first use: a convert whose entry point is in the cache needs only
render.py, not the target facts and planning modules."""

import importlib

_WHERE = {
    "detect_layout": "porter.lora.layout",
    "plan_lora": "porter.lora.render",
    "render_lora": "porter.lora.render",
    "TARGETS": "porter.lora.targets",
    "TargetFacts": "porter.lora.targets",
    "target_facts": "porter.lora.targets",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'porter.lora' has no attribute {name!r}")
