"""Time a tiny Llama training loop on the emulated mlu against plain CPU.

    python benchmarks/emulate.py [--steps 30] [--repeat 3] [--dtype fp32|bf16] [--hidden 64] [--threads 1]

Each run is a fresh process: the CPU one plain torch, the mlu one under porter's emulator
(`import torch_mlu` from porter/emulator/site). Runs alternate, so a busy moment of the
machine hits both; the figures are medians of the timed loop (after 3 warm-up steps), and
the start-up (import torch [+ torch_mlu]) is shown apart. Not a test: numbers vary with
the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from porter.emulator import environment  # noqa: E402
from porter.emulator.launch import prepare  # noqa: E402

LOOP = r"""
import json, sys, time
t0 = time.perf_counter()
import torch
if DEVICE == "mlu":
    import torch_mlu
started = time.perf_counter() - t0
from transformers import LlamaConfig, LlamaForCausalLM
torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=256, hidden_size=HIDDEN, intermediate_size=HIDDEN * 2, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=128)
model = LlamaForCausalLM(cfg).to(DEVICE)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
batch = torch.randint(0, 256, (4, 64)).to(DEVICE)
dtype = {"fp32": None, "bf16": torch.bfloat16}[DTYPE]

def step():
    with torch.autocast(DEVICE, dtype=dtype, enabled=dtype is not None):
        loss = model(input_ids=batch, labels=batch).loss
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss.item()

for _ in range(3):
    step()
t = time.perf_counter()
losses = [step() for _ in range(STEPS)]
print(json.dumps({"startup": started, "loop": time.perf_counter() - t, "last_loss": losses[-1]}))
"""


def run(device: str, args: argparse.Namespace) -> dict:
    code = f"DEVICE={device!r}; STEPS={args.steps}; HIDDEN={args.hidden}; DTYPE={args.dtype!r}\n" + LOOP
    env = environment(1) if device == "mlu" else dict(os.environ)
    # One thread by default: on a shared machine, OpenMP threads fighting for cores make the
    # figures noise (and both runs pay the same kernels).
    env["OMP_NUM_THREADS"] = str(args.threads)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{device} run failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS of both runs")
    args = p.parse_args()
    built = prepare(quiet=False)
    if built:
        print(f"built the emulator extension in {built:.1f} s")
    results: dict[str, list[dict]] = {"cpu": [], "mlu": []}
    for _ in range(args.repeat):
        for device in ("cpu", "mlu"):
            results[device].append(run(device, args))
    med = {d: {k: statistics.median(r[k] for r in rs) for k in ("startup", "loop")} for d, rs in results.items()}
    print(
        f"tiny Llama (hidden {args.hidden}, 2 layers), {args.steps} steps, {args.dtype}, {args.threads} thread(s), "
        f"median of {args.repeat}:"
    )
    for d in ("cpu", "mlu"):
        print(
            f"  {d:>3}: loop {med[d]['loop']:.2f} s ({med[d]['loop'] / args.steps * 1000:.1f} ms/step), "
            f"start-up {med[d]['startup']:.2f} s, last loss {results[d][-1]['last_loss']:.4f}"
        )
    print(f"  emulated / cpu: {med['mlu']['loop'] / med['cpu']['loop']:.2f}x")


if __name__ == "__main__":
    main()
