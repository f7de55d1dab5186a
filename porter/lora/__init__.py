"""The LoRA training entry point porter renders for a ported tree (``OUT/porter_lora/``).

Names are loaded on first use: a convert whose entry point is in the cache needs only
render.py, not the target facts and planning modules."""

from porter.core.lazy import names_on_first_use

_WHERE = {
    "detect_layout": "porter.lora.layout",
    "plan_lora": "porter.lora.render",
    "render_lora": "porter.lora.render",
    "TARGETS": "porter.lora.targets",
    "TargetFacts": "porter.lora.targets",
    "target_facts": "porter.lora.targets",
}
__all__ = sorted(_WHERE)

__getattr__ = names_on_first_use(__name__, _WHERE)
