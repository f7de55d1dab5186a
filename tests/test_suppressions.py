"""Suppression comments never do silently nothing: a bare or malformed `# porter: ignore` and
an unknown code are PRT002 warnings (check and convert alike); a code that suppressed
nothing is PRT003, reported only when selected (as ruff's RUF100)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from porter.cli import main
from porter.core.suppress import problems

SOURCE = """import torch
a = torch.compile(torch.nn.Linear(1, 1))  # porter: ignore
b = torch.compile(torch.nn.Linear(1, 1))  # porter: ignore[PRT901]
c = torch.compile(torch.nn.Linear(1, 1))  # porter: ignore[PRT777, PRT902]
d = 1  # porter: ignore[PRT901]
e = 2  # porter: ignore[]
f = 3  # porter: ignore[cuda]
g = "# porter: ignore"
"""


def check(tree: Path, *args: str) -> tuple[int, list[tuple[str, int]]]:
    result = CliRunner().invoke(
        main, ["check", str(tree), "-t", "mlu", "--no-cache", "--format", "json", *args], catch_exceptions=False
    )
    data = json.loads(result.stdout)
    return result.exit_code, [(f["rule"], f["line"]) for f in data["findings"]]


def tree(tmp_path: Path) -> Path:
    (tmp_path / "t").mkdir(exist_ok=True)
    (tmp_path / "t" / "train.py").write_text(SOURCE)
    return tmp_path / "t"


def test_invalid_suppressions_are_warnings_by_default(tmp_path):
    code, found = check(tree(tmp_path))
    invalid = sorted(line for rule, line in found if rule == "PRT002")
    assert invalid == [2, 4, 6, 7]  # bare, unknown code, empty list, not a code; never the string on line 8
    assert ("PRT901", 2) in found and ("PRT901", 4) in found  # an invalid comment suppresses nothing
    assert ("PRT901", 3) not in found  # a well-formed one does
    assert "PRT003" not in {rule for rule, _ in found}  # unused: opt-in


def test_unused_suppressions_when_selected(tmp_path):
    code, found = check(tree(tmp_path), "--extend-select", "PRT003")
    assert sorted(line for rule, line in found if rule == "PRT003") == [4, 5]  # PRT902 on 4, PRT901 on 5
    # Only codes the run applies: with PRT9 ignored, nothing can be known unused.
    code, found = check(tree(tmp_path), "--extend-select", "PRT003", "--ignore", "PRT9")
    assert not [line for rule, line in found if rule == "PRT003"]


def test_invalid_suppressions_do_not_fail_by_default_but_fail_on_warning(tmp_path):
    t = tmp_path / "clean"
    t.mkdir()
    (t / "a.py").write_text("import torch\nx = torch.zeros(1)  # porter: ignore\n")
    assert check(t)[0] == 0
    assert check(t, "--fail-on", "warning")[0] == 1


def test_convert_reports_them_too(tmp_path):
    src = tree(tmp_path)
    result = CliRunner().invoke(
        main,
        ["convert", str(src), "-t", "mlu", "-o", str(tmp_path / "out"), "--no-cache", "--jobs", "1"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "out" / "porter_report" / "report.json").read_text())
    assert sorted(f["line"] for f in report["findings"] if f["rule"] == "PRT002") == [2, 4, 6, 7]


def test_problems_in_hash_comment_files():
    text = "FROM ubuntu  # porter: ignore\nRUN echo hi  # porter: ignore[PRT501]\n"
    found = problems(text, "hash", known={"PRT501"}, active={"PRT501"}, used=set())
    assert [(p.kind, p.line, p.col) for p in found] == [("invalid", 1, 14), ("unused", 2, 14)]
    assert problems(text, "none", known=(), active=(), used=()) == []


def test_files_no_rule_touches_still_get_their_comments_checked(tmp_path):
    t = tmp_path / "plain"
    t.mkdir()
    (t / "util.py").write_text("def add(a, b):\n    return a + b  # porter: ignore\n")
    (t / "run.sh").write_text("#!/bin/sh\necho hi  # porter: ignore[PRT5]\n")
    code, found = check(t)
    assert sorted(found) == [("PRT002", 2), ("PRT002", 2)]
