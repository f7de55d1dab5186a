"""The LoRA training entry point porter renders for a ported tree (``OUT/porter_lora/``)."""

from porter.lora.layout import detect_layout
from porter.lora.render import plan_lora, render_lora
from porter.lora.targets import TARGETS, TargetFacts, target_facts

__all__ = ["TARGETS", "TargetFacts", "detect_layout", "plan_lora", "render_lora", "target_facts"]
