"""The benchmark's figures: medians, rates, ratios against the peer and a baseline porter, growth with size."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

# Issue 14's targets, as porter's median over the peer's median on the same tree.
TARGETS = {
    "porter convert cold": 0.97,
    "porter check cold": 0.75,
    "porter convert warm": 0.25,
    "porter check warm": 0.25,
}

COPY_FLOOR = "copy floor (cp -r)"  # bench.py's row: a plain copy of the tree, timed in the same rounds


@dataclass(frozen=True)
class Tree:
    name: str
    path: Path
    files: int
    lines: int
    synthetic: bool


def size_label(lines: int) -> str:
    if lines >= 1_000_000 and lines % 1_000_000 == 0:
        return f"{lines // 1_000_000}M"
    if lines >= 1_000 and lines % 1_000 == 0:
        return f"{lines // 1_000}k"
    return str(lines)


def figures(tree: Tree, runs: list[dict], tree_pss_mib: float | None = None) -> dict:
    """Medians over the timed runs; `tree_pss_mib` (sampled in an untimed run) when given."""
    walls = [r["wall_s"] for r in runs]
    median = statistics.median(walls)
    return {
        "median_s": median,
        "min_s": min(walls),
        "max_s": max(walls),
        "files_per_s": tree.files / median,
        "lines_per_s": tree.lines / median,
        "us_per_line": 1e6 * median / max(1, tree.lines),
        "cpu_s": statistics.median(r["user_s"] + r["sys_s"] for r in runs),
        "peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
        "tree_pss_mib": tree_pss_mib
        if tree_pss_mib is not None
        else max((r["tree_pss_mib"] for r in runs if r.get("tree_pss_mib") is not None), default=None),
        "exit_codes": sorted({r["rc"] for r in runs}),
        "runs": len(runs),
    }


def ratios(trees: list[Tree], results: list[dict], over: str = "vs") -> list[dict]:
    """Each porter command's median over another's, per tree: over the --vs command's
    (`over="vs"`, with issue 14's targets), or over the same command of the --baseline porter
    (`over="baseline"`). With the paired ratio: each round's run over the other's run of the
    same round."""
    out = []
    for tree in trees:
        runs = _runs_by_command(tree, results)
        for name, mine in runs.items():
            other = _denominator(name, over)
            if other not in runs:
                continue
            ratio = figures(tree, mine)["median_s"] / figures(tree, runs[other])["median_s"]
            target = TARGETS.get(name) if over == "vs" else None
            # On a machine whose speed drifts (a shared VM), a pair ran moments apart, so the
            # drift cancels.
            paired = _paired(mine, runs[other])
            out.append(
                {
                    "tree": tree.name,
                    "command": name,
                    "ratio": ratio,
                    "target": target,
                    "met": None if target is None else ratio <= target,
                    "paired_median": statistics.median(paired),
                    "paired_min": paired[0],
                    "paired_max": paired[-1],
                }
            )
    return out


def above_copy_floor(trees: list[Tree], results: list[dict]) -> list[dict]:
    """What each convert takes beyond writing the tree: per round, porter's run less that
    round's plain copy (paired, as the ratios), and the copy's own ratio over the peer. A
    convert writes every file of the tree, so no convert can be faster than the copy: a target
    over the peer below the copy's ratio cannot be met on that machine that day."""
    out = []
    for tree in trees:
        runs = _runs_by_command(tree, results)
        if COPY_FLOOR not in runs:
            continue
        floor = runs[COPY_FLOOR]
        floor_ratio = statistics.median(_paired(floor, runs["vs"])) if "vs" in runs else None
        for name, mine in runs.items():
            if name.startswith("porter convert"):
                extra = statistics.median(a["wall_s"] - b["wall_s"] for a, b in zip(mine, floor))
                target = TARGETS.get(name)
                out.append(
                    {
                        "tree": tree.name,
                        "command": name,
                        "above_floor_s": extra,
                        "floor_ratio": floor_ratio,
                        "target_below_floor": None if target is None or floor_ratio is None else target < floor_ratio,
                    }
                )
    return out


def _runs_by_command(tree: Tree, results: list[dict]) -> dict[str, list[dict]]:
    return {r["command"]: r["runs"] for r in results if r["tree"] == tree.name and r["runs"]}


def _paired(mine: list[dict], other: list[dict]) -> list[float]:
    """Each round's run over the other command's run of the same round, sorted."""
    return sorted(a["wall_s"] / b["wall_s"] for a, b in zip(mine, other))


def _denominator(name: str, over: str) -> str | None:
    if over == "vs":
        return None if name == "vs" else "vs"
    who, _, rest = name.partition(" ")
    return f"{over} {rest}" if who == "porter" else None


def growth(trees: list[Tree], results: list[dict]) -> dict[str, dict[str, float]]:
    """Time per line at each larger synthetic tree over the next smaller one, and overall
    (largest over smallest), per command."""
    synth = sorted((t for t in trees if t.synthetic), key=lambda t: t.lines)
    per_line = {
        (r["tree"], r["command"]): figures(t, r["runs"])["us_per_line"]
        for t in synth
        for r in results
        if r["tree"] == t.name and r["runs"]
    }
    pairs = list(zip(synth, synth[1:]))
    if len(synth) > 2:
        pairs.append((synth[0], synth[-1]))
    out: dict[str, dict[str, float]] = {}
    for small, large in pairs:
        for (tree, cmd), value in per_line.items():
            if tree == small.name and (large.name, cmd) in per_line:
                out.setdefault(cmd, {})[f"{large.name}/{small.name}"] = per_line[(large.name, cmd)] / value
    return out


def print_report(trees: list[Tree], results: list[dict], meta: dict) -> None:
    by_name = {t.name: t for t in trees}
    print(
        f"\nporter benchmark: {meta['cpus']} CPUs, Python {meta['python']}, porter = {' '.join(meta['porter'])}, "
        f"--jobs {meta['jobs'] or 'default (all cores)'}, {meta['repeat']} rounds, medians"
    )
    if meta.get("vs"):
        print(f"vs = {meta['vs']}")
    head = (
        f"{'tree':<14} {'files':>6} {'lines':>8}  {'command':<22} {'median s':>9} {'min-max s':>13} "
        f"{'cpu s':>7} {'files/s':>8} {'lines/s':>9} {'us/line':>8} {'peak MiB':>9} {'tree MiB':>9}"
    )
    print("\n" + head + "\n" + "-" * len(head))
    for r in results:
        if not r["runs"]:
            continue
        tree = by_name[r["tree"]]
        f = figures(tree, r["runs"], r.get("tree_pss_mib"))
        flag = "" if f["exit_codes"] in ([0], [0, 1], [1]) else f"  exit {f['exit_codes']}"
        print(
            f"{tree.name:<14} {tree.files:>6} {tree.lines:>8}  {r['command']:<22} {f['median_s']:>9.2f} "
            f"{f['min_s']:>6.2f}-{f['max_s']:<6.2f} {f['cpu_s']:>7.2f} {f['files_per_s']:>8.0f} {f['lines_per_s']:>9.0f} "
            f"{f['us_per_line']:>8.1f} {f['peak_rss_mib']:>9.0f} {_mib(f['tree_pss_mib']):>9}{flag}"
        )
    print("\ncpu s: user + system time of the command and every process it waited for (workers included).")
    print("peak MiB: the largest single process of the run (with worker processes, not their sum).")
    print("tree MiB: the largest sum of PSS over the whole process tree, sampled every 0.1 s in the untimed")
    print("          first run of each command (sampling costs CPU, so timed runs are not sampled; Linux only).")
    rat = ratios(trees, results)
    if rat:
        print("\nratio porter / vs (medians, same tree, same run); targets from issue 14 (for LLaMA-Factory);")
        print("paired: the median (min-max) of each round's porter run over that round's peer run:")
        _print_ratios(rat)
    floor = above_copy_floor(trees, results)
    if floor:
        print("\nconvert beyond writing the tree: the median over rounds of porter's run less that round's copy")
        print("floor (what porter's own work adds; no convert can beat the copy):")
        for x in floor:
            said = "" if x["floor_ratio"] is None else f"  copy floor / vs {x['floor_ratio']:.2f}x (paired)"
            if x["target_below_floor"]:
                said += f": issue 14's {TARGETS[x['command']]:.2f}x is below it"
            print(f"  {x['tree']:<14} {x['command']:<22} +{x['above_floor_s']:.2f} s{said}")
    base = ratios(trees, results, over="baseline")
    if base:
        print(
            f"\nratio porter / baseline ({meta.get('baseline')}), same commands, same rounds; below 1.00: faster than"
        )
        print("the baseline; paired as above (what a change did to porter's speed, whatever the machine's speed):")
        _print_ratios(base)
    grow = growth(trees, results)
    if grow:
        print(
            "\ngrowth: time per line at the larger tree / at the smaller (1.0 = linear; below 1 = start-up amortised):"
        )
        for cmd, steps in grow.items():
            print(f"  {cmd:<20} " + "  ".join(f"{step} {factor:5.2f}" for step, factor in steps.items()))
    for note in meta.get("notes", []):
        print(f"note: {note}")


def _print_ratios(rows: list[dict]) -> None:
    for x in rows:
        verdict = "" if x["target"] is None else f"target <= {x['target']:.2f}: {'met' if x['met'] else 'NOT met'}"
        paired = f"paired {x['paired_median']:5.2f}x ({x['paired_min']:.2f}-{x['paired_max']:.2f})"
        print(f"  {x['tree']:<14} {x['command']:<22} {x['ratio']:6.2f}x  {paired}  {verdict}")


def _mib(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def to_json(trees: list[Tree], results: list[dict], meta: dict) -> dict:
    by_name = {t.name: t for t in trees}
    return {
        "meta": meta,
        "trees": [{"name": t.name, "files": t.files, "lines": t.lines, "synthetic": t.synthetic} for t in trees],
        "results": [
            {
                "tree": r["tree"],
                "command": r["command"],
                **figures(by_name[r["tree"]], r["runs"], r.get("tree_pss_mib")),
                "argv": r["runs"][0]["argv"],
                "walls_s": [x["wall_s"] for x in r["runs"]],
                "cpus_s": [x["user_s"] + x["sys_s"] for x in r["runs"]],
                "peaks_mib": [x["peak_rss_mib"] for x in r["runs"]],
                "tree_pss_mib_runs": [x.get("tree_pss_mib") for x in r["runs"]],
            }
            for r in results
            if r["runs"]
        ],
        "ratios": ratios(trees, results),
        "baseline_ratios": ratios(trees, results, over="baseline"),
        "above_copy_floor": above_copy_floor(trees, results),
        "growth": growth(trees, results),
    }
