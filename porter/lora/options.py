"""The command-line options of the rendered ``train_lora.py``, as data.

One list feeds both the script's argparse parser and the option table of its README, so
the two cannot drift apart (``tests/test_lora_render.py`` also reads the parser back out
of the rendered script and compares it with the README).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from porter.lora.targets import TargetFacts

Default = Union[None, bool, int, float, str]


@dataclass(frozen=True)
class Option:
    """One ``--name`` of train_lora.py."""

    name: str
    """Without the leading dashes; also the attribute name on the parsed namespace."""
    help: str
    kind: str = "str"
    """"str", "int", "float", or "flag" (store_true)."""
    default: Default = None
    choices: tuple[str, ...] = ()
    required: bool = False
    group: str = "training"

    @property
    def type_name(self) -> str | None:
        """The argparse ``type=`` callable's name, or None for strings and flags."""
        return self.kind if self.kind in ("int", "float") else None


def train_options(facts: TargetFacts) -> tuple[Option, ...]:
    """Every option of train_lora.py rendered for ``facts``' target, grouped, in order."""
    device = facts.device_type
    return (
        # ---- model and data
        Option(
            "model",
            "local model directory (config, weights, tokenizer); never downloaded",
            required=True,
            group="model and data",
        ),
        Option(
            "data",
            "training data: a .json or .jsonl file, or a folder written by datasets' save_to_disk",
            required=True,
            group="model and data",
        ),
        Option(
            "data_format",
            "alpaca (instruction/input/output) or sharegpt (conversations or messages); auto looks at the first record",
            default="auto",
            choices=("auto", "alpaca", "sharegpt"),
            group="model and data",
        ),
        Option(
            "eval_file",
            "evaluation data in the same forms as --data (then --val_size is not used)",
            group="model and data",
        ),
        Option(
            "val_size",
            "fraction of --data held out for evaluation when there is no --eval_file (0: no evaluation)",
            kind="float",
            default=0.1,
            group="model and data",
        ),
        Option(
            "cutoff_len",
            "maximum tokens per example; longer ones are cut",
            kind="int",
            default=1024,
            group="model and data",
        ),
        Option(
            "max_samples",
            "use only the first N training records (0: all)",
            kind="int",
            default=0,
            group="model and data",
        ),
        Option(
            "trust_remote_code",
            "allow the model directory's own Python code (some models need it)",
            kind="flag",
            default=False,
            group="model and data",
        ),
        Option("output_dir", "checkpoints, logs and the final adapter", default="output_lora", group="model and data"),
        # ---- device
        Option(
            "device",
            f"auto: {device} when a card is visible, else cpu",
            default="auto",
            choices=("auto", device, "cpu"),
            group="device",
        ),
        Option(
            "precision",
            "auto: bf16 where the card has it, else fp16; fp32 on cpu",
            default="auto",
            choices=("auto", "bf16", "fp16", "fp32"),
            group="device",
        ),
        Option(
            "ddp_backend",
            f"process-group backend; auto: {facts.backend} on {device}, gloo on cpu",
            default="auto",
            choices=("auto", facts.backend, "gloo"),
            group="device",
        ),
        Option(
            "attn_implementation", "transformers attention: eager, sdpa, ...", default=facts.attention, group="device"
        ),
        Option(
            "gradient_checkpointing",
            "recompute activations in the backward pass to save memory",
            kind="flag",
            default=False,
            group="device",
        ),
        Option(
            "deepspeed",
            "DeepSpeed JSON config (ds_config.json: ZeRO-2, ds_config_zero3.json: ZeRO-3); launch with torchrun",
            group="device",
        ),
        Option("fsdp", 'FSDP mode for the Trainer, e.g. "full_shard auto_wrap"; launch with torchrun', group="device"),
        Option("fsdp_config", "FSDP config JSON for the Trainer (with --fsdp)", group="device"),
        # ---- LoRA
        Option(
            "lora_target",
            "all (every linear layer but the output head) or names like q_proj,v_proj",
            default="all",
            group="LoRA",
        ),
        Option("lora_rank", "LoRA rank r", kind="int", default=8, group="LoRA"),
        Option("lora_alpha", "LoRA scaling alpha", kind="int", default=16, group="LoRA"),
        Option("lora_dropout", "dropout on the LoRA branch", kind="float", default=0.05, group="LoRA"),
        # ---- training
        Option("batch_size", "examples per device and micro-batch", kind="int", default=1),
        Option("gradient_accumulation_steps", "micro-batches per optimizer step", kind="int", default=8),
        Option("learning_rate", "peak learning rate", kind="float", default=2e-4),
        Option("num_train_epochs", "epochs (when --max_steps is 0)", kind="float", default=3.0),
        Option("max_steps", "stop after N optimizer steps (0: train for --num_train_epochs)", kind="int", default=0),
        Option("warmup_ratio", "fraction of the steps with a linear learning-rate warmup", kind="float", default=0.03),
        Option("lr_scheduler_type", "transformers scheduler name", default="cosine"),
        Option("max_grad_norm", "gradient clipping norm", kind="float", default=1.0),
        Option("seed", "random seed (data order, LoRA initialisation)", kind="int", default=42),
        # ---- checkpoints, evaluation, logs
        Option("logging_steps", "print the loss every N steps", kind="int", default=10, group="checkpoints and logs"),
        Option("save_steps", "write a checkpoint every N steps", kind="int", default=500, group="checkpoints and logs"),
        Option(
            "save_total_limit",
            "keep only the newest N checkpoints (0: keep all)",
            kind="int",
            default=3,
            group="checkpoints and logs",
        ),
        Option(
            "eval_steps",
            "evaluate every N steps (0: once, at the end)",
            kind="int",
            default=0,
            group="checkpoints and logs",
        ),
        Option(
            "resume_from_checkpoint",
            "a checkpoint folder, or last: the newest in --output_dir",
            group="checkpoints and logs",
        ),
        Option(
            "report_to",
            "none, tensorboard (needs the tensorboard package), or another transformers integration",
            default="none",
            group="checkpoints and logs",
        ),
        Option(
            "merge_to",
            "after training, also write base+adapter merged weights to this folder",
            group="checkpoints and logs",
        ),
    )
