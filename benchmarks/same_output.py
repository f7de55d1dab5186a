"""Does a change keep porter's output? Convert and check real trees with an earlier porter (a
git revision of this repository) and with this one, and compare every byte.

    python benchmarks/same_output.py --baseline HEAD~3 --repo ~/src/LLaMA-Factory --repo ~/src/nanoGPT \
        [--target mlu,hip] [--workdir DIR --keep]

For each tree and target: `porter convert TREE --target T -o OUT --no-cache` (OUT, the report
and the patch) and `porter check TREE --target T --format json --no-cache`, by both porters.
Both write to the same OUT path in turn (report.json records it), so the trees compare as
they are. Prints one line per tree and target and the first differing files; exits 1 if any
output differs. The refactors that promise "behaviour unchanged" say so with this.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import baseline_porter, default_porter  # noqa: E402  (a sibling script)


def run_porter(porter: list[str], args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([*porter, *args], capture_output=True, text=True, timeout=1800)


def outputs(porter: list[str], tree: Path, target: str, out: Path, keep_as: Path) -> tuple[int, str]:
    """Convert into `out`, move it to `keep_as`; the convert's exit code and check's JSON."""
    if out.exists():
        shutil.rmtree(out)
    done = run_porter(porter, ["convert", str(tree), "--target", target, "-o", str(out), "--no-cache"])
    if out.exists():
        shutil.move(str(out), str(keep_as))
    check = run_porter(
        porter, ["check", str(tree), "--target", target, "--format", "json", "--no-cache", "--exit-zero"]
    )
    return done.returncode, check.stdout


def differing(a: Path, b: Path) -> list[str]:
    """Relative paths whose bytes differ, or that only one side has."""
    out: list[str] = []
    stack = [filecmp.dircmp(a, b)]
    while stack:
        cmp = stack.pop()
        rel = Path(cmp.left).relative_to(a)
        out += [str(rel / name) for name in cmp.left_only + cmp.right_only + cmp.funny_files]
        _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
        out += [str(rel / name) for name in mismatch + errors]
        stack.extend(cmp.subdirs.values())
    return sorted(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="the earlier porter: a git revision of this repository")
    parser.add_argument("--repo", action="append", required=True, type=Path, help="a tree to port (repeatable)")
    parser.add_argument("--target", default="mlu,hip", help="comma-separated targets (default mlu,hip)")
    parser.add_argument("--porter", default=None, help="how to start this porter (default: the one beside this Python)")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the outputs (in --workdir)")
    args = parser.parse_args()

    work = args.workdir or Path(tempfile.mkdtemp(prefix="porter-same-"))
    work.mkdir(parents=True, exist_ok=True)
    porters = {
        "baseline": baseline_porter(args.baseline, work),
        "this": args.porter.split() if args.porter else default_porter(),
    }
    same = True
    try:
        for tree in args.repo:
            tree = tree.resolve()
            for target in args.target.split(","):
                kept, results = {}, {}
                for who, porter in porters.items():
                    kept[who] = work / who / f"{tree.name}-{target}"
                    kept[who].parent.mkdir(parents=True, exist_ok=True)
                    results[who] = outputs(porter, tree, target, work / f"{tree.name}_{target}", kept[who])
                diffs = (
                    differing(kept["baseline"], kept["this"])
                    if all(p.exists() for p in kept.values())
                    else ["(no OUT)"]
                )
                codes = [results[w][0] for w in porters]
                check_same = results["baseline"][1] == results["this"][1]
                ok = not diffs and codes[0] == codes[1] and check_same
                same &= ok
                files = sum(1 for p in kept["this"].rglob("*") if p.is_file()) if kept["this"].exists() else 0
                print(
                    f"{'same' if ok else 'DIFFERS'}  {tree.name} {target}: {files} files of OUT"
                    f"{'' if not diffs else f', {len(diffs)} differ: ' + ', '.join(diffs[:8])}"
                    f"{'' if codes[0] == codes[1] else f', convert exit {codes[0]} -> {codes[1]}'}"
                    f"{'' if check_same else ', check --format json differs'}"
                )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"outputs kept in {work}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
