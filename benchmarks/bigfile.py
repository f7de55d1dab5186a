"""What one very large file costs porter, per file type, and what the size limit saves.

    python benchmarks/bigfile.py [--kinds python,yaml,json,notebook] [--sizes 0.1,1,10,50]
                                 [--huge 50] [--all-cores 50] [--json FILE]

Not a timed test: it prints figures. For each file type and size (MB), one file of that
type (benchmarks/synth_big.py) is converted alone with no size limit (`--max-file-size 0`,
one process, no cache), in a fresh wrapper process (measure.py): wall seconds, CPU seconds
(user + system: what a busy machine moves less) and the peak resident memory of the porter
process. Per type, then, the cost of one more MB in CPU seconds and MiB: the slope from the
smallest size to the largest (what start-up costs drops out), and the growth, the slope of
the last step over the slope of the first (1.0: linear; 2.0: one MB costs twice as much at
the largest size as at the smallest, a quadratic term showing). Then an `--all-cores` MB
Python file is converted with no limit and every core (the default `--jobs`: a module over
12 MB is analysed in groups of statements, side by side, porter/python/grouped.py), with the
peak of every process together (their proportional set sizes summed, measure.py
--sample-tree). Last, a `--huge` MB Python file is converted with the default limit, which
skips it (copied as it is, reported with the reason). Each size runs once: the large ones take
minutes and gigabytes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synth_big import KINDS, write  # noqa: E402

from porter.core.limits import MAX_FILE_MB  # noqa: E402


def run(src: Path, out: Path, log: Path, *extra: str, jobs: int = 1) -> dict:
    """One convert in its own wrapper: {"rc", "wall_s", "peak_rss_mib", ...} (measure.py);
    with more than one job, also the whole process tree's peak ("tree_pss_mib")."""
    porter = [
        sys.executable,
        "-P",
        "-m",
        "porter",
        "convert",
        str(src),
        "--target",
        "mlu",
        "-o",
        str(out),
        "--force",
        "--no-cache",
        "--jobs",
        str(jobs),
        *extra,
    ]
    sample = ["--sample-tree"] if jobs > 1 else []
    done = subprocess.run(
        [sys.executable, str(HERE / "measure.py"), str(log), *sample, "--", *porter],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout)
    if result["rc"] not in (0, 1):
        result["log_tail"] = log.read_text(errors="replace")[-1000:]
    return result


def _row(kind: str, mb: float, limit: str, result: dict) -> str:
    cpu = result["user_s"] + result["sys_s"]
    return (
        f"{kind:>9} {mb:7.2f} {limit:>8} {result['wall_s']:8.1f} {cpu:7.1f} {result['peak_rss_mib']:9.0f}"
        f"  exit {result['rc']}"
    )


def slopes(points: list[tuple[float, float]]) -> tuple[float, float]:
    """(cost of one more MB from the smallest size to the largest, growth: the last step's
    slope over the first's) of (MB, value) points in increasing MB."""
    (x0, y0), (x1, y1), (xn, yn) = points[0], points[1], points[-1]
    overall = (yn - y0) / (xn - x0)
    first = (y1 - y0) / (x1 - x0)
    last = (yn - points[-2][1]) / (xn - points[-2][0])
    return overall, (last / first if first > 0 else float("nan"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)}")
    parser.add_argument(
        "--sizes", default="0.1,1,10", help="MB, comma-separated, increasing, converted without a limit"
    )
    parser.add_argument(
        "--huge", type=float, default=50.0, help="MB of the Python file converted with the default limit (0: none)"
    )
    parser.add_argument(
        "--all-cores",
        type=float,
        default=50.0,
        help="MB of the Python file converted without a limit by every core (--jobs: one file, "
        "analysed in groups side by side; 0: none)",
    )
    parser.add_argument("--json", type=Path, help="write every run's figures here")
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    sizes = [float(s) for s in args.sizes.split(",") if s]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or len(sizes) < 2 or sizes != sorted(sizes):
        parser.error(f"unknown kinds {unknown}" if unknown else "--sizes: at least two, increasing")
    work = Path(tempfile.mkdtemp(prefix="porter-bigfile-"))
    runs: list[dict] = []
    try:
        print(f"{'kind':>9} {'MB':>7} {'limit':>8} {'seconds':>8} {'CPU s':>7} {'peak MiB':>9}  status", flush=True)
        for kind in kinds:
            for mb in sizes:
                src = work / f"{kind}-{mb:g}"
                src.mkdir()
                real_mb = write(kind, src, mb).stat().st_size / 2**20
                result = run(src, work / f"{kind}-{mb:g}-out", work / "log", "--max-file-size", "0")
                shutil.rmtree(src, ignore_errors=True)
                shutil.rmtree(work / f"{kind}-{mb:g}-out", ignore_errors=True)
                runs.append({"kind": kind, "mb": real_mb, "limit": None, **result})
                print(
                    _row(kind, real_mb, "none", result) + (f"\n{result['log_tail']}" if "log_tail" in result else ""),
                    flush=True,
                )
        if args.huge:
            src = work / "huge"
            src.mkdir()
            real_mb = write("python", src, args.huge).stat().st_size / 2**20
            result = run(src, work / "huge-out", work / "log")
            runs.append({"kind": "python", "mb": real_mb, "limit": "default", **result})
            over = real_mb > MAX_FILE_MB
            print(
                _row("python", real_mb, "default", result)
                + (" (over the limit: skipped, copied as it is)" if over else "")
            )
        if args.all_cores:
            src = work / "all-cores"
            src.mkdir()
            real_mb = write("python", src, args.all_cores).stat().st_size / 2**20
            jobs = os.cpu_count() or 1
            result = run(src, work / "all-cores-out", work / "log", "--max-file-size", "0", jobs=jobs)
            shutil.rmtree(work / "all-cores-out", ignore_errors=True)
            runs.append({"kind": "python", "mb": real_mb, "limit": None, "jobs": jobs, **result})
            tree = result.get("tree_pss_mib")
            print(_row("python", real_mb, f"{jobs} jobs", result) + (f", all processes {tree:.0f} MiB" if tree else ""))
        print("peak MiB: the porter process's largest resident set (measure.py)\n")
        print(
            f"{'kind':>9} {'CPU s per MB':>12} {'growth':>7} {'MiB per MB':>11} {'growth':>7}   (from {sizes[0]:g} to {sizes[-1]:g} MB)"
        )
        for kind in kinds:
            mine = [r for r in runs if r["kind"] == kind and r["limit"] is None and "jobs" not in r]
            seconds = slopes([(r["mb"], r["user_s"] + r["sys_s"]) for r in mine])
            memory = slopes([(r["mb"], r["peak_rss_mib"]) for r in mine])
            print(f"{kind:>9} {seconds[0]:12.2f} {seconds[1]:7.2f} {memory[0]:11.1f} {memory[1]:7.2f}")
        if args.json:
            args.json.write_text(json.dumps(runs, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
