"""The benchmark's arithmetic: ratios over the peer and over a baseline porter, and the
export of a baseline revision. No timing here (run times are made up)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, _HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while being built
    sys.path.insert(0, str(_HERE))  # bench.py imports its siblings by name
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(_HERE))
    return module


summary = _load("summary")
TREE = summary.Tree("lf", Path("/nowhere"), files=10, lines=100, synthetic=False)


def _runs(*walls: float) -> list[dict]:
    return [{"wall_s": w, "user_s": w, "sys_s": 0.0, "peak_rss_mib": 1.0, "rc": 0} for w in walls]


def _results(**walls: tuple[float, ...]) -> list[dict]:
    return [{"tree": "lf", "command": name.replace("_", " "), "runs": _runs(*w)} for name, w in walls.items()]


def test_ratio_over_the_peer_is_median_over_median_with_the_pairs_round_by_round():
    results = _results(vs=(1.0, 2.0, 4.0), porter_check_cold=(0.5, 1.0, 3.0))
    (row,) = summary.ratios([TREE], results)
    assert row["command"] == "porter check cold"
    assert row["ratio"] == pytest.approx(1.0 / 2.0)
    assert (row["paired_min"], row["paired_median"], row["paired_max"]) == pytest.approx((0.5, 0.5, 0.75))
    assert row["target"] == 0.75 and row["met"] is True


def test_ratio_over_the_baseline_pairs_each_porter_command_with_the_same_baseline_command():
    results = _results(
        vs=(1.0, 1.0),
        porter_convert_cold=(0.8, 0.9),
        baseline_convert_cold=(1.0, 1.0),
        porter_check_cold=(0.3, 0.3),
        baseline_check_cold=(0.2, 0.2),
    )
    rows = {r["command"]: r for r in summary.ratios([TREE], results, over="baseline")}
    assert set(rows) == {"porter convert cold", "porter check cold"}  # never baseline over itself, nor vs
    assert rows["porter convert cold"]["ratio"] == pytest.approx(0.85)
    assert rows["porter check cold"]["ratio"] == pytest.approx(1.5)  # slower than the baseline: > 1
    assert rows["porter check cold"]["target"] is None  # issue 14's targets are over the peer only
    over_vs = {r["command"] for r in summary.ratios([TREE], results)}
    assert "baseline check cold" in over_vs and "vs" not in over_vs


def test_convert_beyond_the_copy_floor_is_paired_round_by_round_and_says_when_a_target_is_below_the_copy():
    results = _results(
        vs=(1.0, 2.0, 1.0),
        porter_convert_warm=(0.4, 0.7, 0.35),
        porter_convert_cold=(1.0, 1.5, 0.8),
        porter_check_cold=(0.5, 0.5, 0.5),
    )
    results.append({"tree": "lf", "command": summary.COPY_FLOOR, "runs": _runs(0.3, 0.6, 0.3)})
    rows = {r["command"]: r for r in summary.above_copy_floor([TREE], results)}
    assert set(rows) == {"porter convert warm", "porter convert cold"}  # check writes no tree
    assert rows["porter convert warm"]["above_floor_s"] == pytest.approx(0.1)  # (0.1, 0.1, 0.05)
    assert rows["porter convert warm"]["floor_ratio"] == pytest.approx(0.3)
    assert rows["porter convert warm"]["target_below_floor"] is True  # 0.25x < the copy's 0.3x
    assert rows["porter convert cold"]["target_below_floor"] is False
    assert summary.above_copy_floor([TREE], _results(vs=(1.0,), porter_convert_warm=(0.4,))) == []  # no copy timed


def test_no_baseline_no_baseline_ratios():
    assert summary.ratios([TREE], _results(vs=(1.0,), porter_check_cold=(0.5,)), over="baseline") == []


def test_a_baseline_revision_is_exported_and_runs(tmp_path):
    repo = _HERE.parent
    if subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    bench = _load("bench")
    argv = bench.baseline_porter("HEAD", tmp_path)
    done = subprocess.run([*argv, "--version"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "baseline-HEAD" / "porter" / "__init__.py").is_file()
