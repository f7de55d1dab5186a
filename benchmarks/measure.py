"""Run one command and report its wall time and memory as one JSON line.

    python benchmarks/measure.py LOG [--sample-tree] -- COMMAND ARG...

A fresh wrapper process per measured run, so that `RUSAGE_CHILDREN` covers exactly that
command: `peak_rss_mib` is the largest resident set of the command or of any descendant it
waited for (worker processes included), not their sum. With `--sample-tree` (Linux) the
wrapper also samples the whole process tree every 0.1 s and sums its proportional set
sizes (PSS: pages shared between forked workers counted once): `tree_pss_mib` is the
largest such sum, the memory the run as a whole held (a spike shorter than a sample can be
missed). Sampling reads each process's page tables, CPU time a command using every core
would lose, so the benchmark samples only its untimed runs. The command's output goes to LOG.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

SAMPLE_S = 0.1


def tree_pss_kib(pid: int) -> int | None:
    """Sum of PSS over `pid` and its descendants, from /proc; None where there is no /proc."""
    total, stack, seen = 0, [pid], False
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup") as handle:
                total += next(int(line.split()[1]) for line in handle if line.startswith("Pss:"))
            seen = True
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as handle:
                    stack.extend(int(c) for c in handle.read().split())
        except (OSError, ValueError, StopIteration):
            continue  # the process ended meanwhile, or the kernel lacks these files
    return total if seen else None


def main(argv: list[str]) -> int:
    sample = len(argv) > 1 and argv[1] == "--sample-tree"
    rest = argv[2:] if sample else argv[1:]
    if not argv or len(rest) < 2 or rest[0] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    log, command = argv[0], rest[1:]
    tree_peak: int | None = None
    with open(log, "wb") as out:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        while True:
            try:
                rc = child.wait(timeout=SAMPLE_S if sample else None)
                break
            except subprocess.TimeoutExpired:
                pss = tree_pss_kib(child.pid)
                if pss is not None:
                    tree_peak = max(tree_peak or 0, pss)
        wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    # ru_maxrss is in KiB on Linux, in bytes on macOS.
    peak = usage.ru_maxrss / (1 << 20) if sys.platform == "darwin" else usage.ru_maxrss / 1024
    print(
        json.dumps(
            {
                "rc": rc,
                "wall_s": wall,
                "peak_rss_mib": peak,
                "tree_pss_mib": None if tree_peak is None else tree_peak / 1024,
                "user_s": usage.ru_utime,
                "sys_s": usage.ru_stime,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
