"""The LoRA SFT settings written for a ported LLaMA-Factory tree, per layout and target.

The settings are data: the templates only format them (YAML for the "llamafactory"
layout, command-line flags for "llmtuner"). Every key must be an argument that version
of LLaMA-Factory accepts; ``tests/data/llamafactory_args.json`` records those names with
their sources and the tests check each key against it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Union

from porter.lora.layout import LLAMAFACTORY, LLMTUNER
from porter.lora.targets import TargetFacts

Value = Union[bool, int, float, str]

# Keys the launch script lets the user override from the environment, and the variable.
OVERRIDES: Mapping[str, str] = MappingProxyType(
    {
        "model_name_or_path": "MODEL",
        "dataset": "DATASET",
        "dataset_dir": "DATASET_DIR",
        "template": "TEMPLATE",
        "output_dir": "OUTPUT_DIR",
    }
)

# A demo alpaca set that each version ships in its own data/ directory.
_DEMO_DATASET = {LLAMAFACTORY: "alpaca_en_demo", LLMTUNER: "alpaca_gpt4_en"}
# transformers renamed evaluation_strategy to eval_strategy (4.41) and later dropped the
# old name; 0.6.0 ran on the old name, the current release requires the new one.
_EVAL_STRATEGY_KEY = {LLAMAFACTORY: "eval_strategy", LLMTUNER: "evaluation_strategy"}


@dataclass(frozen=True)
class LFConfig:
    """LoRA SFT settings for one LLaMA-Factory layout, grouped into labelled sections."""

    layout: str
    sections: tuple[tuple[str, tuple[tuple[str, Value], ...]], ...]
    notes: Mapping[str, str]
    """A short why-comment per key, where the value was chosen for the target."""

    def items(self) -> list[tuple[str, Value]]:
        """All (key, value) pairs in order, sections flattened."""
        return [pair for _, pairs in self.sections for pair in pairs]


def _flash_attn(layout: str, facts: TargetFacts) -> Value:
    # 0.6.0 has a boolean switch for FlashAttention-2 only; later releases take a mode.
    if layout == LLMTUNER:
        return False
    return "disabled" if facts.attention == "eager" else facts.attention


def lf_config(layout: str, facts: TargetFacts, *, deepspeed_config: str | None = None) -> LFConfig:
    """Build the LoRA SFT settings for ``layout`` on ``facts``' target.

    ``deepspeed_config`` is the DeepSpeed JSON path as seen from the repository root, or
    None to train without DeepSpeed. No quantization key is ever written: bitsandbytes
    (QLoRA) does not run on MLU and only partly on ROCm.
    """
    if layout not in (LLAMAFACTORY, LLMTUNER):
        raise ValueError(f"unknown LLaMA-Factory layout {layout!r}")
    method: list[tuple[str, Value]] = [
        ("stage", "sft"),
        ("do_train", True),
        ("finetuning_type", "lora"),
        ("lora_target", "all"),
        ("lora_rank", 8),
        ("lora_alpha", 16),
        ("lora_dropout", 0.05),
    ]
    if deepspeed_config:
        method.append(("deepspeed", deepspeed_config))
    precision = facts.default_precision
    sections = (
        ("model", (("model_name_or_path", "/path/to/local/model"), ("flash_attn", _flash_attn(layout, facts)))),
        ("method", tuple(method)),
        (
            "dataset",
            (
                ("dataset", _DEMO_DATASET[layout]),
                ("dataset_dir", "data"),
                ("template", "default"),
                ("cutoff_len", 1024),
                ("max_samples", 1000),
                ("overwrite_cache", True),
                ("preprocessing_num_workers", 8),
            ),
        ),
        (
            "output",
            (
                ("output_dir", f"saves/porter_lora_sft_{facts.name}"),
                ("logging_steps", 10),
                ("save_steps", 500),
                ("plot_loss", True),
                ("overwrite_output_dir", True),
            ),
        ),
        (
            "train",
            (
                ("per_device_train_batch_size", 1),
                ("gradient_accumulation_steps", 8),
                ("learning_rate", 0.0001),
                ("num_train_epochs", 3.0),
                ("lr_scheduler_type", "cosine"),
                ("warmup_ratio", 0.1),
                (precision, True),
                ("ddp_timeout", 180000000),
            ),
        ),
        (
            "eval",
            (
                ("val_size", 0.1),
                ("per_device_eval_batch_size", 1),
                (_EVAL_STRATEGY_KEY[layout], "steps"),
                ("eval_steps", 500),
            ),
        ),
    )
    notes = {
        "flash_attn": facts.attention_reason,
        precision: facts.lf_precision_note,
        "model_name_or_path": "a local directory: nothing is downloaded on the cluster",
        "template": "LLaMA-Factory's generic format; run_sft.sh passes the template that fits MODEL "
        "(templates.json) when MODEL is set and TEMPLATE is not",
    }
    if layout == LLAMAFACTORY:
        # This version accepts transformers 4.55 to 5.8; transformers 5 deprecated the ratio.
        notes["warmup_ratio"] = (
            "as in this version's examples; a transformers 5 release that has "
            "dropped it takes the same ratio as warmup_steps: 0.1"
        )
    return LFConfig(layout=layout, sections=sections, notes=MappingProxyType(notes))


def yaml_scalar(value: Value) -> str:
    """Format one value as a YAML scalar that reads back as the same Python value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    plain = value and value[0].isalnum() and all(c.isalnum() or c in "_-./" for c in value)
    if plain and value.lower() not in ("true", "false", "null", "yes", "no", "on", "off"):
        return value
    return json.dumps(value)  # a JSON string is a valid YAML double-quoted scalar


def cli_flag(key: str, value: Value) -> str:
    """Format one setting as a transformers HfArgumentParser flag (``--key [value]``)."""
    if value is True:
        return f"--{key}"
    return f"--{key} {value}"
