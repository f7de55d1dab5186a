"""The LoRA smoke run of `porter verify`: OUT/porter_lora's entry point, a few steps on a
tiny local model, on 1 and on 2 emulated devices; the loss must fall."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from porter.emulator import environment
from porter.verify.bounded import run_bounded
from porter.verify.locate import innermost_frame

ENTRY = "porter_lora/train_lora.py"
STEPS = 12
# The entry point's log line ("[porter-lora] step 3/12 loss 2.51 ...") and transformers
# Trainer's ("{'loss': 2.51, ...}" or "{'loss': '2.51', ...}"): the entry point is being
# moved onto Trainer, and either way its losses are read.
_LOSS = re.compile(r"step \d+/\d+ loss ([0-9.]+(?:e-?\d+)?)|'loss': '?([0-9.]+(?:e-?\d+)?)")


@dataclass
class LoraRun:
    devices: int
    command: list[str]
    returncode: int | None = None
    losses: list[float] = field(default_factory=list)
    output_tail: list[str] = field(default_factory=list)
    file: str | None = None
    line: int = 0

    @property
    def loss_fell(self) -> bool:
        n = len(self.losses)
        if n < 4:
            return False
        third = max(1, n // 3)
        return sum(self.losses[-third:]) / third < sum(self.losses[:third]) / third


def lora_command(entry: Path, model: Path, data: Path, output: Path, devices: int, target: str = "mlu") -> list[str]:
    """The entry point's documented CLI, for a short run on the emulated device (`target`:
    mlu, npu). The one place that knows its flags."""
    args = [
        str(entry),
        "--model",
        str(model),
        "--data",
        str(data),
        "--output_dir",
        str(output),
        "--max_steps",
        str(STEPS),
        "--device",
        target,
        "--logging_steps",
        "1",
        "--batch_size",
        "8",
        "--gradient_accumulation_steps",
        "1",
        "--learning_rate",
        "1e-2",
        "--cutoff_len",
        "64",
    ]
    if devices == 1:
        return [sys.executable, *args]
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(devices), *args]


def parse_losses(output: str) -> list[float]:
    return [float(a or b) for a, b in _LOSS.findall(output)]


def build_tiny_model(work: Path, version: str | None, timeout: float, target: str = "mlu") -> str | None:
    """Write work/model and work/alpaca.jsonl; an error message, or None."""
    proc = run_bounded(
        [sys.executable, "-m", "porter.verify.tinymodel", str(work)],
        timeout,
        env=environment(1, version, own_devices=True, target=target),
    )
    if proc.timed_out:
        return f"building the tiny model did not finish within {timeout:g} s"
    if proc.returncode != 0:
        return "building the tiny model failed: " + " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
    return None


def run_lora(root: Path, work: Path, devices: int, version: str | None, timeout: float, target: str = "mlu") -> LoraRun:
    cmd = lora_command(root / ENTRY, work / "model", work / "alpaca.jsonl", work / f"out_{devices}", devices, target)
    run = LoraRun(devices, cmd)
    env = environment(devices, version, own_devices=True, target=target)
    env.update(OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")
    proc = run_bounded(cmd, timeout, env=env, cwd=work)
    output = proc.stdout + "\n" + proc.stderr
    run.returncode = proc.returncode
    run.losses = parse_losses(proc.stdout)
    run.output_tail = [ln for ln in output.strip().splitlines() if ln.strip()][-12:]
    if proc.timed_out:
        # The stacks the stuck processes dumped are in the output; the tail says who they were.
        run.output_tail.append(f"timed out after {timeout:g} s: {proc.stuck_summary()}")
    run.file, run.line = innermost_frame(output, root)
    return run
