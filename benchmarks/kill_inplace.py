"""Kill `porter convert --in-place` at random moments and check that no file is lost or torn.

    python benchmarks/kill_inplace.py [--src TREE | --lines 20000] [--kills 50] [--seconds 300]

Not a unit test: a stress loop. First the tree is converted once, untouched by signals, to
learn each file's new bytes. Then, again and again: a fresh copy of the original tree,
`porter convert --in-place` started on it, SIGKILL at a random moment of its run (the
moment drawn from the first run's duration). After each kill every file of the copy must be
either its old bytes or its new bytes (nothing half-written, nothing missing, no extra file
but porter's own temporaries), and every Python file that parsed before must still parse.
Every few kills the killed copy is converted again to the end: then each file must be new,
and no temporary file porter made may be left behind.

Prints one line per kill and a summary; exits 1 on the first violation (the copy is kept).
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMP_SUFFIX = ".porter-tmp"


def files_of(root: Path) -> dict[str, bytes]:
    found = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                continue
            with open(path, "rb") as fh:
                found[os.path.relpath(path, root)] = fh.read()
    return found


def parses(data: bytes) -> bool:
    try:
        ast.parse(data)
        return True
    except (SyntaxError, ValueError):
        return False


def porter_command(extra: list[str]) -> list[str]:
    return [sys.executable, "-P", "-m", "porter", *extra]


def check_copy(copy: Path, old: dict[str, bytes], new: dict[str, bytes], finished: bool) -> list[str]:
    """What is wrong with the copy after a kill (or, `finished`, after a complete re-run)."""
    problems = []
    now = files_of(copy)
    for rel, data in now.items():
        name = os.path.basename(rel)
        if name.endswith(TEMP_SUFFIX) and not finished:
            continue  # a killed writer's temporary: the next run removes it
        if rel not in old:
            problems.append(f"{rel}: a file that was not in the tree")
            continue
        if data != old[rel] and data != new[rel]:
            problems.append(f"{rel}: neither the old nor the new bytes ({len(data)} bytes)")
        elif finished and data != new[rel]:
            problems.append(f"{rel}: not converted by the complete re-run")
        if rel.endswith(".py") and parses(old[rel]) and not parses(data):
            problems.append(f"{rel}: no longer parses")
    for rel in old:
        if rel not in now:
            problems.append(f"{rel}: missing")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=None, help="tree to copy (default: a synthetic one)")
    parser.add_argument("--lines", type=int, default=20_000, help="size of the synthetic tree (default 20000)")
    parser.add_argument("--kills", type=int, default=50, help="how many kills at most (default 50)")
    parser.add_argument("--seconds", type=float, default=300.0, help="stop after this long (default 300)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rerun-every", type=int, default=5, help="complete a killed copy every N kills (default 5)")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="porter-kill-"))
    original = work / "original"
    if args.src is not None:
        shutil.copytree(args.src, original, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    else:
        sys.path.insert(0, str(HERE))
        from generate import generate

        generate(original, args.lines)
    old = files_of(original)
    reference = work / "reference"
    common = ["--target", "mlu", "--in-place", "--no-cache", "--report-dir"]
    durations = []
    for _ in range(3):  # the shortest of three: a busy moment of the machine must not set the range
        if reference.exists():
            shutil.rmtree(reference)
        shutil.copytree(original, reference, symlinks=True)
        started = time.perf_counter()
        subprocess.run(
            porter_command(["convert", str(reference), *common, str(work / "ref_report")]),
            check=False,
            capture_output=True,
        )
        durations.append(time.perf_counter() - started)
    duration = min(durations)
    new = files_of(reference)
    changed = sum(1 for rel in old if old[rel] != new[rel])
    print(f"tree: {len(old)} files, {changed} changed by a complete run of {duration:.2f} s")
    kills = reruns = 0
    deadline = time.monotonic() + args.seconds
    while kills < args.kills and time.monotonic() < deadline:
        copy = work / "copy"
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(original, copy, symlinks=True)
        delay = rng.uniform(0.0, duration * 1.1)
        proc = subprocess.Popen(
            porter_command(["convert", str(copy), *common, str(work / "report")]),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        time.sleep(delay)
        finished_first = proc.poll() is not None
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # porter and its forked workers
        except ProcessLookupError:
            pass
        proc.wait()
        kills += 1
        temps = sum(1 for rel in files_of(copy) if rel.endswith(TEMP_SUFFIX))
        written = sum(1 for rel, data in files_of(copy).items() if rel in new and data == new[rel] and data != old[rel])
        problems = check_copy(copy, old, new, finished=False)
        print(
            f"kill {kills}: after {delay:.3f} s{' (run had ended)' if finished_first else ''}: "
            f"{written}/{changed} files new, {temps} temporaries left, {'OK' if not problems else 'BROKEN'}"
        )
        if not problems and kills % args.rerun_every == 0:
            rerun = subprocess.run(
                porter_command(["convert", str(copy), *common, str(work / "report")]), capture_output=True
            )
            problems = check_copy(copy, old, new, finished=True)
            if rerun.returncode not in (0, 1):
                problems.append(f"re-run exited {rerun.returncode}: {rerun.stderr.decode(errors='replace')[-300:]}")
            reruns += 1
            print(f"  re-run to the end: {'OK' if not problems else 'BROKEN'}")
        if problems:
            print("\n".join("  " + p for p in problems[:20]))
            print(f"kept for inspection: {copy}")
            return 1
    print(
        f"summary: {kills} kills, {reruns} complete re-runs, every file old or new and parsing; "
        f"{time.monotonic() - deadline + args.seconds:.0f} s"
    )
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
