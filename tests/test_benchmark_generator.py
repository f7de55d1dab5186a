"""The benchmark's synthetic repository: deterministic, the size asked for, valid, convertible.

No timing here: timing belongs in `benchmarks/bench.py`, not in tests.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from porter.cli import main

_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "generate.py"
_spec = importlib.util.spec_from_file_location("benchmarks_generate", _PATH)
generate = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = generate  # dataclasses look their module up while being built
_spec.loader.exec_module(generate)

LINES = 5_000


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> tuple[Path, "generate.TreeStats"]:
    root = tmp_path_factory.mktemp("synth") / "repo"
    return root, generate.generate(root, LINES, seed=0)


def _contents(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _convert(src: Path, out: Path) -> dict:
    result = CliRunner().invoke(
        main,
        ["convert", str(src), "--target", "mlu", "-o", str(out), "--jobs", "1", "--no-cache"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    return json.loads((out / "porter_report" / "report.json").read_text())["summary"]


def test_same_seed_same_bytes(tree, tmp_path):
    root, _ = tree
    again = tmp_path / "repo"
    generate.generate(again, LINES, seed=0)
    assert _contents(again) == _contents(root)


def test_other_seed_other_tree(tree, tmp_path):
    root, _ = tree
    other = tmp_path / "repo"
    generate.generate(other, LINES, seed=1)
    assert _contents(other) != _contents(root)


@pytest.mark.parametrize("lines", [LINES, 20_000], ids=["5k", "20k"])
def test_about_the_requested_size(tmp_path, lines):
    stats = generate.generate(tmp_path / "repo", lines)
    assert abs(stats.lines - lines) <= 0.02 * lines
    assert generate.tree_stats(tmp_path / "repo").lines == stats.lines


def test_python_files_parse_and_a_quarter_touch_cuda(tree):
    root, stats = tree
    modules = [p for p in root.rglob("*.py") if p.name != "__init__.py"]
    for path in modules:
        ast.parse(path.read_bytes(), filename=str(path))
    lengths = [p.read_bytes().count(b"\n") for p in root.glob("src/**/mod*.py")]
    assert max(lengths) <= 450 and sorted(lengths)[len(lengths) // 2] >= 100
    touching = [p for p in modules if b"cuda" in p.read_bytes().lower()]
    assert 0.15 <= len(touching) / len(modules) <= 0.4
    assert {p.suffix for p in root.rglob("*") if p.is_file()} >= {".py", ".sh", ".txt", ".yaml", ".json"}


def test_porter_converts_it_and_the_result_is_stable(tree, tmp_path):
    root, _ = tree
    first = _convert(root, tmp_path / "once")
    assert first["edits"] > 0 and first["files_failed"] == 0 and first["files_skipped"] == 0
    second = _convert(tmp_path / "once", tmp_path / "twice")
    assert second["edits"] == 0, second["edits_by_rule"]
