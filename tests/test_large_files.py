"""A large file costs porter in proportion to its size: no step redoes work per edit, per hunk
or per scalar that it could do once, and the benchmark that measures it runs.

No timing here (benchmarks/bigfile.py measures): each test counts the work a step does.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import yaml

from porter.core.patch import file_diff
from porter.engine.pipeline import convert_bytes
from porter.filetypes import _config_rules, _yamltree
from porter.filetypes._configtree import Scalar
from porter.python import analyze
from porter.reports import hunks
from porter.rules import ActiveRules, Selection, load_rules

ROOT = Path(__file__).resolve().parents[1]


def _convert(name: str, data: bytes):
    return convert_bytes(name, data, ActiveRules(load_rules("mlu"), Selection()))[1]


def _counting(monkeypatch, module, name: str) -> list:
    calls: list = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def test_each_edit_finds_its_hunk_by_search(monkeypatch):
    # 400 hunks, 400 edits: every hunk was measured against every edit
    old = "".join(f"x{i} = 1\n" + "pass\n" * 9 for i in range(400))
    new = old.replace(" = 1\n", " = 2\n")
    spans = [(10 * i, 10 * i + 1, 10 * i, 10 * i + 1) for i in range(400)]  # each edit's line
    parsed = hunks.parse_patch(file_diff("a.py", old.encode(), new.encode(), spans=spans))["a.py"]
    assert len(parsed) == 400
    edits = [{"rule": "PRT101", "line": 1 + 10 * i} for i in range(400)]
    measured = _counting(monkeypatch, hunks, "_distance")
    annotated = hunks.hunks_from_patch(parsed, edits)
    assert all(h.rules == ("PRT101",) for h in annotated)
    assert len(measured) <= 2 * len(edits)


def test_what_blocks_a_config_rewrite_is_looked_for_once(monkeypatch):
    runs = "".join(f"  - name: r{i}\n    flash_attn: fa2\n" for i in range(200))
    looked = _counting(monkeypatch, _config_rules, "_blocker")
    result = _convert("sweep.yaml", f"model_name_or_path: x\nruns:\n{runs}".encode())
    assert len(result.edits) == 200
    assert len(looked) == 1  # once per rule and document, not once per hit


def test_yaml_is_read_without_composing_nodes_and_verified_without_a_tree(monkeypatch):
    # PyYAML's nodes (and their marks) weighed more than the config tree; the edited text's
    # check built the whole tree again.
    text = "model_name_or_path: x\nddp_backend: nccl\nruns:\n" + "".join(
        f"  - name: run{i}\n    device: cuda:{i % 8}\n    seed: {i}\n" for i in range(300)
    )
    composed = _counting(monkeypatch, yaml.nodes.Node, "__init__")
    trees = _counting(monkeypatch, _yamltree, "_document")
    result = _convert("sweep.yaml", text.encode())
    assert len(result.edits) == 301
    assert len(trees) == 1
    assert len(composed) <= 300  # one per scalar that is not a plain string (the seeds), none per node


def test_python_edits_are_verified_without_a_second_syntax_tree(monkeypatch):
    parsed = _counting(monkeypatch, analyze, "parse")
    result = _convert("a.py", b"import torch\nx = torch.ones(2).cuda()\n")
    assert result.status == "changed"
    assert len(parsed) == 1  # the rules' tree; the edited text is compiled, not parsed again


def test_an_edit_that_breaks_python_is_still_refused():
    text = "import torch\nx = torch.ones(2).cuda()\n"
    assert analyze.parse_problem(text + "def f(:\n", "a.py").startswith("does not parse: ")
    # the compiler refuses what parses (return outside a function): parse decides, as before
    assert analyze.parse_problem(text + "return 1\n", "a.py") is None


def test_config_tree_nodes_have_no_instance_dictionary():
    assert not hasattr(Scalar("cuda", 0, 4), "__dict__")


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"benchmarks_{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_large_files_of_the_benchmark_are_valid_and_of_their_size(tmp_path):
    synth = _load("synth_big")
    for kind in synth.KINDS:
        folder = tmp_path / kind
        folder.mkdir()
        path = synth.write(kind, folder, 0.2)
        assert 0.2 * synth.MB <= path.stat().st_size < 0.25 * synth.MB, kind
        again = tmp_path / f"{kind}-again"
        again.mkdir()
        assert synth.write(kind, again, 0.2).read_bytes() == path.read_bytes()  # deterministic
        text = path.read_text()
        {"python": ast.parse, "yaml": yaml.safe_load, "json": json.loads, "notebook": json.loads}[kind](text)
        result = _convert(path.name, path.read_bytes())
        assert result.status == "changed" and len(result.edits) > 100, (kind, result.reason)


def test_the_benchmark_runs_and_reports_the_cost_per_mb():
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bigfile.py"),
            "--kinds",
            "yaml,json",
            "--sizes",
            "0.02,0.05",
            "--huge",
            "0",
            "--all-cores",
            "0.05",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    assert sum(1 for r in rows if r[:1] in (["yaml"], ["json"]) and r[-2:-1] == ["exit"]) == 4
    assert any(r[:1] == ["yaml"] and len(r) == 5 for r in rows)  # its per-MB line
    assert any(r[:1] == ["python"] and "jobs" in r and "exit" in r for r in rows)  # the every-core run
