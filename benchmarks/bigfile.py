"""What one very large Python file costs porter, and what the size limit saves.

    python benchmarks/bigfile.py [--sizes 1,2,5] [--huge 50]

Not a timed test: it prints figures. For each size (MB) one Python file of that size (CUDA
calls spread through it) is converted with no limit (`--max-file-size 0`, one process,
no cache): wall time and the peak memory of the porter process. Then a `--huge` MB file is
converted with the default limit, which skips it (copied as it is, reported with the
reason) instead of spending minutes and gigabytes on it: a 50 MB file took more than 300 s
and about 7 GB before the limit (parsed for the rules, and again to verify the edited text).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BLOCK = (
    "def step_{i}(model, batch):\n"
    "    x = batch.cuda()\n"
    "    with torch.cuda.amp.autocast():\n"
    "        y = model(x)\n"
    "    torch.cuda.synchronize()\n"
    "    return y.sum().item() + {i}\n\n\n"
)


def python_file(path: Path, megabytes: float) -> None:
    target = int(megabytes * 1024 * 1024)
    with open(path, "w") as fh:
        fh.write("import torch\n\n\n")
        size, i = 0, 0
        while size < target:
            text = BLOCK.format(i=i)
            fh.write(text)
            size += len(text)
            i += 1


def run(src: Path, out: Path, *extra: str) -> tuple[float, float, int]:
    """(seconds, peak MB of the porter process, exit code)."""
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = subprocess.run([sys.executable, "-P", "-m", "porter", "convert", str(src), "--target", "mlu", "-o", str(out),
                           "--force", "--no-cache", "--jobs", "1", *extra], capture_output=True)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KB, the largest child so far
    if proc.returncode not in (0, 1):
        print(proc.stderr.decode(errors="replace")[-500:], file=sys.stderr)
    return seconds, max(peak, before) / 1024, proc.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,2,5", help="MB, comma-separated, converted without a limit")
    parser.add_argument("--huge", type=float, default=50.0, help="MB of the file converted with the default limit")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="porter-bigfile-"))
    try:
        print(f"{'file':>10}  {'limit':>8}  {'seconds':>8}  {'peak MB':>8}  status")
        for mb in [float(s) for s in args.sizes.split(",") if s]:
            src = work / f"src{mb:g}"
            src.mkdir()
            python_file(src / "big.py", mb)
            seconds, peak, code = run(src, work / f"out{mb:g}", "--max-file-size", "0")
            print(f"{mb:>8g}MB  {'none':>8}  {seconds:8.1f}  {peak:8.0f}  exit {code}")
        src = work / "huge"
        src.mkdir()
        python_file(src / "big.py", args.huge)
        seconds, peak, code = run(src, work / "outhuge")
        print(f"{args.huge:>8g}MB  {'default':>8}  {seconds:8.1f}  {peak:8.0f}  exit {code} (skipped, copied as it is)")
        print("peak MB: the largest porter process so far (ru_maxrss of children)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
