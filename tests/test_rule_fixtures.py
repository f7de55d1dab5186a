"""One parametrized test over every rule fixture: output, firing, idempotence, parse."""

from __future__ import annotations

import ast

import pytest

from fixture_cases import discover, table_can_report
from porter.engine.pipeline import check_bytes, convert_bytes
from porter.rules import TARGETS, ActiveRules, Selection, load_rules

CASES = discover()


def _active(case) -> ActiveRules:
    """The case's rule set. Without a `select` of its own, the case's code and the codes it
    expects are named, so that their informational findings (outside the default set) are
    reported too; a case that selects says exactly what is named."""
    version, select = case.settings()
    expected = [*case.expectations().values(), *case.expected_notes().values()]
    named = () if select else (case.code, *sorted({c for codes in expected for c in codes}))
    return ActiveRules(load_rules(case.target), Selection(version, select, extend=named))


def _convert(case, data: bytes):
    return convert_bytes(case.path.name, data, _active(case))[1]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_fixture(case):
    data = case.path.read_bytes()
    result = _convert(case, data)
    assert result.status in ("changed", "unchanged"), result.reason
    out = result.new_bytes if result.new_bytes is not None else data
    expected = case.expected.read_bytes() if case.expected else data
    assert out.decode("utf-8", "replace") == expected.decode("utf-8", "replace")
    assert out == expected

    # The op scan reports in `check` (convert adds its findings to the report afterwards).
    checked = check_bytes(case.path.name, data, _active(case)).findings
    fired = {e.rule for e in result.edits} | {f.rule for f in result.findings} | {f.rule for f in checked}
    if case.must_fire:
        assert case.code in fired, f"{case.code} did not fire"
    elif case.path.name.startswith("keep"):
        assert case.code not in fired, f"{case.code} fired on a must-not-change case"

    by_line: dict[int, set[str]] = {}
    for e in result.edits:
        by_line.setdefault(e.line, set()).add(e.rule)
    for f in (*result.findings, *checked):
        by_line.setdefault(f.line, set()).add(f.rule)
    for line, codes in case.expectations().items():
        missing = codes - by_line.get(line, set())
        assert not missing, f"line {line}: expected {sorted(missing)}"

    for line, codes in case.expected_notes().items():
        for code in codes:
            severities = {f.severity for f in (*result.findings, *checked) if f.line == line and f.rule == code}
            assert severities == {"info"}, f"line {line}: {code} should be an info note only, got {sorted(severities)}"

    again = _convert(case, out)
    assert not again.edits, f"not idempotent: {[(e.rule, e.line, e.after) for e in again.edits]}"
    if case.path.suffix == ".py":
        ast.parse(out)  # bytes: honours a PEP 263 coding line


def test_every_rule_has_both_kinds_of_fixture():
    missing = []
    for target in TARGETS:
        for rule in load_rules(target).rules:
            needs_change = rule.kind != "op-table" or table_can_report(target, rule)
            if rule.kind == "vendor-path":
                continue  # works on paths in a tree: tests/test_vendor_paths.py
            if rule.params.reporting.opt_in and rule.kind == "suppression-comment":
                continue  # runs only when selected: tests/test_suppressions.py
            names = [c.path.name for c in CASES if c.target == target and c.code == rule.code]
            if needs_change and not any(n.startswith("change") for n in names):
                missing.append(f"{target}/{rule.code}: no change case")
            if not any(n.startswith("keep") for n in names):
                missing.append(f"{target}/{rule.code}: no keep case")
    assert not missing, "\n".join(missing)
