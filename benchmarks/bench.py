"""Time `porter convert` and `porter check` on synthetic trees and real checkouts.

    python benchmarks/bench.py [--lines 10000,100000,1000000] [--repo PATH ...]
        [--vs 'COMMAND with {src} and {out}'] [--baseline GIT-REV] [--repeat 5] [--jobs N] [--json FILE]

Every measured run is a fresh subprocess (start-up counts) inside its own wrapper process
(benchmarks/measure.py), so wall time and peak memory belong to that run alone. Runs of
the different commands alternate round by round, so that a slow moment of the machine
hits all of them alike; the figures are medians over `--repeat` rounds. With `--baseline`,
an earlier porter (a revision of this repository) runs the same commands in the same rounds:
porter over itself, paired round by round, says whether a change made it slower whatever
the machine's speed of the day.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import generate, tree_stats  # noqa: E402
from summary import COPY_FLOOR, Tree, print_report, size_label, to_json  # noqa: E402


def default_porter() -> list[str]:
    beside = Path(sys.executable).parent / "porter"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("porter")
    return [found] if found else [sys.executable, "-m", "porter"]


def compile_bytecode(given: bool) -> str:
    """Compile porter's modules as `pip install` does, so that no run times the compiler: an
    editable install, or PYTHONDONTWRITEBYTECODE=1 in the environment, would otherwise compile
    every module on every run (~40 ms). Only for the porter beside this Python."""
    if given:
        return "bytecode: left as it is (--porter given)"
    spec = importlib.util.find_spec("porter")
    if spec is None or spec.origin is None:
        return "bytecode: porter not importable here; left as it is"
    package = str(Path(spec.origin).parent)
    subprocess.run([sys.executable, "-m", "compileall", "-q", package], check=False, capture_output=True)
    return f"bytecode: compiled {package} (as an install does)"


def check_options(porter: list[str]) -> set[str] | None:
    """Options `porter check` accepts, or None when there is no check command."""
    try:
        done = subprocess.run([*porter, "check", "--help"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return {word.strip(",") for word in done.stdout.split() if word.startswith("--")}


def baseline_porter(rev: str, work: Path) -> list[str]:
    """How to run porter as it was at git revision `rev` of this repository: its files are
    exported into `work` (no checkout of the user's work tree changes) and compiled."""
    repo = HERE.parent
    folder = work / f"baseline-{rev.replace('/', '_')}"
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", rev], capture_output=True, check=False)
    if archive.returncode != 0:
        sys.exit(f"--baseline {rev}: git archive failed: {archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder / "porter")], check=False, capture_output=True)
    # -P: the directory a run starts in must not shadow the exported porter.
    return ["env", f"PYTHONPATH={folder}", sys.executable, "-P", "-m", "porter"]


class Bench:
    """Builds each command's argv for one run, runs it through the wrapper, cleans up."""

    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args, self.work = args, work
        # Outputs of finished runs, removed only after the tree's last run: ext4 is slow to
        # create files just after many were deleted (it skips recently freed inodes one by
        # one), so removing each run's output at once would charge the next run for it.
        self.leftovers: list[Path] = []
        self.tree_memory: dict[tuple[str, str], float | None] = {}  # from the untimed runs
        self.porter = shlex.split(args.porter) if args.porter else default_porter()
        self.notes: list[str] = [compile_bytecode(given=bool(args.porter))]
        # Who runs the porter commands: "porter", and "baseline" with --baseline.
        self.porters = {"porter": self.porter}
        if args.baseline:
            self.porters["baseline"] = baseline_porter(args.baseline, work)
            self.notes.append(
                f"baseline: porter at {args.baseline} (git archive), run as {' '.join(self.porters['baseline'])}"
            )
        self.check = {who: check_options(argv) for who, argv in self.porters.items()}
        for who, options in self.check.items():
            if options is None:
                self.notes.append(f"{who} check: not available (`porter check --help` failed); check rows skipped")
            elif "--cache-dir" not in options:
                self.notes.append(f"{who} check takes no --cache-dir: its runs are listed as cold, no warm runs")

    def commands(self) -> list[str]:
        # The baseline's run of a command right after porter's, so that a pair runs moments apart.
        names = []
        for verb, temp in (("convert", "cold"), ("convert", "warm"), ("check", "cold"), ("check", "warm")):
            for who, options in self.check.items():
                if verb == "convert" or (options is not None and (temp == "cold" or "--cache-dir" in options)):
                    names.append(f"{who} {verb} {temp}")
        if self.args.vs:
            # The least any converter that writes a whole tree can take on this machine:
            # creating files is slow on some file systems (~0.3-0.5 ms each on a VM's ext4).
            names[:0] = ["vs", COPY_FLOOR]
        return names

    def _porter_argv(self, name: str, tree: Tree, scratch: Path) -> list[str]:
        who, verb, temp = name.split()
        porter, options = self.porters[who], self.check[who] or set()
        jobs = ["--jobs", str(self.args.jobs)] if self.args.jobs else []
        cache = self.work / f"cache-{who}-{verb}-{tree.name}" if temp == "warm" else scratch / "cache"
        if verb == "convert":
            return [
                *porter,
                "convert",
                str(tree.path),
                "--target",
                self.args.target,
                "-o",
                str(scratch / "out"),
                *jobs,
                "--cache-dir",
                str(cache),
            ]
        argv = [*porter, "check", str(tree.path), "--target", self.args.target]
        if "--jobs" not in options:
            jobs = []
        return argv + jobs + (["--cache-dir", str(cache)] if "--cache-dir" in options else [])

    def run(self, name: str, tree: Tree, sample_tree: bool = False) -> dict:
        """One measured run of `name` on `tree`; preparation and clean-up are not timed.
        With `sample_tree`, the process tree's memory is sampled (that costs the run CPU)."""
        scratch = Path(tempfile.mkdtemp(prefix="run-", dir=self.work))
        if name == COPY_FLOOR:
            argv = ["cp", "-r", str(tree.path), str(scratch / "out")]
        elif name == "vs":
            src = scratch / tree.path.name
            shutil.copytree(tree.path, src, symlinks=True)
            mapping = {"src": shlex.quote(str(src)), "out": shlex.quote(str(scratch / "out"))}
            argv = ["/bin/sh", "-c", self.args.vs.format(**mapping)]
        else:
            argv = self._porter_argv(name, tree, scratch)
        log = scratch.parent / f"{scratch.name}.log"
        # Flush what preparing this run and cleaning up the last one wrote, so that the
        # file system's catching up is not timed as part of this run.
        os.sync()
        sampling = ["--sample-tree"] if sample_tree else []
        done = subprocess.run(
            [sys.executable, str(HERE / "measure.py"), str(log), *sampling, "--", *argv],
            capture_output=True,
            text=True,
            check=True,
        )
        result = json.loads(done.stdout)
        self.leftovers.append(scratch)
        result["argv"] = argv
        ok = (0, 1) if name.split()[1:2] == ["check"] else (0,)
        if result["rc"] not in ok:
            result["log_tail"] = log.read_text(errors="replace")[-2000:]
        log.unlink(missing_ok=True)
        return result

    def clean_up(self) -> None:
        for scratch in self.leftovers:
            shutil.rmtree(scratch, ignore_errors=True)
        self.leftovers.clear()
        os.sync()

    def prefill(self, tree: Tree) -> None:
        """Fill the warm caches (and the OS file cache) with one untimed run of each command;
        a sampled untimed run of each gives its whole process tree's memory (`tree_memory`):
        the filling run itself for cold commands, one more run for warm ones."""
        for name in self.commands():
            warm = name.endswith("warm")
            result = self.run(name, tree, sample_tree=not warm)
            if "log_tail" in result:
                sys.exit(f"{name} failed on {tree.name} (exit {result['rc']}):\n{result['log_tail']}")
            if warm:
                result = self.run(name, tree, sample_tree=True)
            self.tree_memory[(tree.name, name)] = result.get("tree_pss_mib")


def prepare_trees(args: argparse.Namespace, work: Path) -> list[Tree]:
    trees = []
    for lines in args.lines:
        path = work / "trees" / f"synth-{size_label(lines)}"
        print(f"generating {path.name} ...", file=sys.stderr, flush=True)
        stats = generate(path, lines, args.seed)
        trees.append(Tree(path.name, path, stats.files, stats.lines, synthetic=True))
    for repo in args.repo:
        src = Path(repo).resolve()
        path = work / "trees" / src.name
        # Version-control folders are left out: porter skips them, a plain copier would not.
        shutil.copytree(src, path, symlinks=True, ignore=shutil.ignore_patterns(".git", ".hg", ".svn"))
        stats = tree_stats(path)
        trees.append(Tree(src.name, path, stats.files, stats.lines, synthetic=False))
    return trees


def parse_lines(value: str) -> list[int]:
    out = []
    for part in value.replace("_", "").split(","):
        part = part.strip().lower()
        if not part or part == "none":
            continue
        scale = {"k": 1_000, "m": 1_000_000}.get(part[-1], 1)
        out.append(int(float(part.rstrip("km")) * scale))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--lines",
        type=parse_lines,
        default=parse_lines("10k,100k,1M"),
        help="synthetic tree sizes, comma-separated (10000 or 10k; 'none' for no synthetic tree)",
    )
    parser.add_argument(
        "--repo", action="append", default=[], help="a real checkout to time as well (repeatable; copied first)"
    )
    parser.add_argument(
        "--vs",
        default=None,
        help="another converter, timed on a fresh copy of the same tree each run: a shell command with {src} and {out}",
    )
    parser.add_argument(
        "--baseline",
        default=None,
        help="an earlier porter, a git revision of this repository (a commit, "
        "a tag, HEAD~3): timed in the same rounds, with porter's paired ratio over it",
    )
    parser.add_argument("--repeat", type=int, default=5, help="measured rounds per tree (default 5)")
    parser.add_argument("--jobs", type=int, default=None, help="porter --jobs (default: porter's own, all cores)")
    parser.add_argument("--target", default="mlu")
    parser.add_argument("--porter", default=None, help="how to run porter (default: the porter beside this Python)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic trees")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    parser.add_argument("--workdir", type=Path, default=None, help="scratch directory (default: a new temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench_"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        bench = Bench(args, work)
        trees = prepare_trees(args, work)
        results: list[dict] = []
        for tree in trees:
            print(f"{tree.name}: {tree.files} files, {tree.lines} lines", file=sys.stderr, flush=True)
            bench.prefill(tree)
            runs: dict[str, list[dict]] = {name: [] for name in bench.commands()}
            names = bench.commands()
            for round_ in range(args.repeat):
                # Rotate the order every round so that no command always runs first.
                for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
                    r = bench.run(name, tree)
                    runs[name].append(r)
                    print(
                        f"  {name:<20} round {round_ + 1}/{args.repeat}: {r['wall_s']:8.2f} s "
                        f"{r['peak_rss_mib']:7.0f} MiB  exit {r['rc']}",
                        file=sys.stderr,
                        flush=True,
                    )
                    if "log_tail" in r:
                        print(r["log_tail"], file=sys.stderr)
            bench.clean_up()
            results += [
                {
                    "tree": tree.name,
                    "command": name,
                    "runs": rs,
                    "tree_pss_mib": bench.tree_memory.get((tree.name, name)),
                }
                for name, rs in runs.items()
            ]
        meta = {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "porter": bench.porter,
            "jobs": args.jobs,
            "repeat": args.repeat,
            "vs": args.vs,
            "baseline": args.baseline,
            "notes": bench.notes,
        }
        print_report(trees, results, meta)
        if args.json:
            args.json.write_text(json.dumps(to_json(trees, results, meta), indent=2) + "\n")
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
