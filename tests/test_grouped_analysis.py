"""A module too large to analyse whole is analysed in groups of top-level statements beside a
skeleton of the rest (porter/python/grouped.py), to the very findings of one analysis of the
whole, in one process or several.

The harshest cut is used: every top-level statement its own group (GROUP_CHARS = 1), so that
every decision a kind takes across statements is taken across groups. No timing
(benchmarks/bigfile.py measures).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fixture_cases import FIXTURES
from porter.core.forked import forked_map, processes_per_task, task_processes
from porter.engine.parallel import map_files
from porter.python import analyze, grouped, pieces
from porter.rules import TARGETS, ActiveRules, load_rules

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from grouped_vs_whole import analysed  # noqa: E402
from synth_big import python_file  # noqa: E402


@pytest.mark.parametrize("target", TARGETS)
def test_every_fixture_finds_the_same_whole_and_a_statement_at_a_time(target):
    rules = ActiveRules(load_rules(target))
    grouped_files = 0
    differing = []
    for path in sorted((FIXTURES / target).rglob("*.py")):
        if ".out." in path.name:
            continue
        data = path.read_bytes()
        whole = analysed(str(path), data, rules)
        if whole is None:
            continue
        plan = grouped.plan(data.decode("utf-8", errors="replace"), str(path), analyze._parse_whole, 1)
        grouped_files += plan is not None and len(plan.groups) > 1
        if analysed(str(path), data, rules, 1) != whole:
            differing.append(path.relative_to(FIXTURES))
    assert not differing
    assert grouped_files > 30  # (the comparison compared something)


def test_decisions_across_groups_are_the_whole_module_s():
    """The import a use reports (qualified-name), a variable's mentions (env-var's
    once_per_subject), the vendor import for the module: each decided once, whatever group
    holds the import, the use or the mention."""
    text = (
        "import os\n"
        "import torch\n"
        "from transformers import BitsAndBytesConfig\n"
        "\n"
        "os.environ['NCCL_P2P_DISABLE'] = '1'\n"
        "\n"
        "def load():\n"
        "    return BitsAndBytesConfig(load_in_4bit=True)\n"
        "\n"
        "def debug():\n"
        "    return os.environ.get('NCCL_P2P_DISABLE')\n"
        "\n"
        "def move(x):\n"
        "    return x.cuda()\n"
    )
    rules = ActiveRules(load_rules("mlu"))
    whole = analysed("m.py", text.encode(), rules)
    in_groups = analysed("m.py", text.encode(), rules, 1)
    assert in_groups == whole
    findings = whole[0]
    assert [k for k in findings if k[0] == "PRT402"] == [k for k in findings if k[0] == "PRT402" and k[1] == 8]
    assert [k[4] for k in findings if k[0] == "PRT203"] == [
        next(k[4] for k in findings if k[0] == "PRT203" and "1 more mention" in k[4])
    ]
    assert any(k[0] == "PRT107" and k[6] is not None for k in findings)  # import torch_mlu, once


def _synthetic(size: int) -> str:
    import io

    out = io.StringIO()
    python_file(out, size)
    return out.getvalue()


def test_groups_analysed_side_by_side_find_what_one_process_does():
    data = _synthetic(300_000).encode()
    rules = ActiveRules(load_rules("mlu"))
    one = analysed("big.py", data, rules, 40_000)
    two = analysed("big.py", data, rules, 40_000, processes=2)
    whole = analysed("big.py", data, rules)
    assert one == two == whole
    assert sum(one[0].values()) > 100


def test_a_plan_made_side_by_side_is_the_plan_made_in_one_process():
    # A cut inside a string: that piece does not parse alone, and the plan joins it to the next.
    text = "x = '''\n" + "y = 1\n" * 3000 + "'''\n" + "def f():\n    import torch\n    return 1\n" * 3000
    one = grouped.plan(text, "p.py", analyze._parse_whole, 8_000, processes=1)
    two = grouped.plan(text, "p.py", analyze._parse_whole, 8_000, processes=2)
    assert one is not None and two is not None
    assert [(g.start, g.end, g.lines_before, g.count) for g in one.groups] == [
        (g.start, g.end, g.lines_before, g.count) for g in two.groups
    ]

    # A piece refused alone is joined to the next, side by side as in one process.
    def check(piece: str, lines_before: int) -> int | None:
        return None if piece.count("'''") % 2 else lines_before

    assert pieces.checked(text, 8_000, check, 2) == pieces.checked(text, 8_000, check, 1)
    assert len(pieces.checked(text, 8_000, check, 2) or ()) < len(pieces.cuts(text, 8_000)) + 1


def test_one_large_file_may_use_the_run_s_processes_and_a_worker_s_tasks_may_not():
    assert task_processes() == 1
    assert map_files(_task_processes, [1, 2], lambda t: 1, jobs=2) == [2, 2]
    assert map_files(_task_processes, [1, 2], lambda t: 1, jobs=1) == [1, 1]
    with processes_per_task(2):
        assert forked_map(_task_processes, list(range(40)), 2) == [1] * 40  # a worker's tasks run alone
    assert task_processes() == 1


def _task_processes(_: object) -> int:
    return task_processes()
