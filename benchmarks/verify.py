"""Time `porter verify` on a ported tree, with the emulator's build cached.

    python benchmarks/verify.py OUT [--repeat 3] [--python PY] [--no-lora] [--jobs N]

OUT is the output of `porter convert ... --target mlu`; PY the interpreter of the
environment the tree's own dependencies are installed in (default: this one), which must be
able to import porter (`pip install -e .` there, or this checkout is put on PYTHONPATH).
Each run is a fresh `porter verify OUT --format json`; the figures are the wall time of the
whole command and its parts as verify.json reports them (imports, lora), with how the
modules came out. The emulator's build is made (or found) before the first run, untimed.
Not a test: the numbers move with the machine's load.

The reference run is LLaMA-Factory's port (307 modules) on 2 cores, in an environment
holding LLaMA-Factory's pins (transformers<=5.8, accelerate<=1.11, peft 0.18, trl 0.24,
datasets 4.0):
    git clone <LLaMA-Factory> /tmp/lf && porter convert /tmp/lf --target mlu -o /tmp/lf_mlu
    python benchmarks/verify.py /tmp/lf_mlu --python /tmp/lfvenv/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(python: str, out: Path, args: argparse.Namespace, env: dict) -> dict:
    cmd = [python, "-m", "porter", "verify", str(out), "--format", "json", "--exit-zero"]
    if args.no_lora:
        cmd.append("--no-lora")
    if args.jobs:
        cmd += ["--jobs", str(args.jobs)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"porter verify failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    data = json.loads(proc.stdout)
    return {
        "wall": wall,
        "phases": data.get("phases", {}),
        "modules": data["summary"]["modules_by_status"],
        "findings": data["summary"]["findings_by_severity"],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--no-lora", action="store_true")
    p.add_argument("--jobs", type=int, default=None)
    args = p.parse_args()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    # The build, untimed: `porter run` builds it when missing.
    subprocess.run(
        [args.python, "-m", "porter", "run", "--emulate", "mlu", "--", args.python, "-c", "import torch_mlu"],
        env=env,
        check=True,
    )
    runs = [run(args.python, args.out, args, env) for _ in range(args.repeat)]
    print(f"porter verify {args.out} ({args.python}), {os.cpu_count()} cores, median of {args.repeat}:")
    walls = [r["wall"] for r in runs]
    print(f"  whole command {statistics.median(walls):.1f} s (runs: {', '.join(f'{w:.1f}' for w in walls)})")
    for phase in runs[0]["phases"]:
        print(f"  {phase}: {statistics.median(r['phases'].get(phase, 0.0) for r in runs):.1f} s")
    print(f"  modules: {runs[-1]['modules']}; findings: {runs[-1]['findings']}")


if __name__ == "__main__":
    main()
