"""Every example a rule documents runs as a fixture, so `porter rules CODE` cannot drift.

An example runs in its file (`file`, or its kind's example file) as `setup + before`, with
only its rule and the rules its `also` names selected. With an `after`, the output must be
`setup + after`; without one, the rule must report and change nothing. Either way the rule
must fire, a second run must change nothing, and a Python output must parse. A vendor-path
example (a file kept for another device) runs in a tree holding it at its `file` path.
"""

from __future__ import annotations

import ast

import pytest

from fixture_cases import table_can_report
from porter.engine.pipeline import check_bytes, convert_bytes
from porter.rules import TARGETS, ActiveRules, Selection, load_rules
from porter.rules.kinds import KINDS

# The newest torch_mlu line pins op-table examples (a newer table must not move them).
VERSIONS = {"mlu": "2.4", "hip": None, "npu": "2.8"}


def _cases():
    for target in TARGETS:
        for rule in load_rules(target).rules:
            for n, example in enumerate(rule.examples):
                yield pytest.param(target, rule, example, id=f"{target}/{rule.code}/{n}")


def _text(*parts: str) -> bytes:
    return "".join(p if p.endswith("\n") or not p else p + "\n" for p in parts).encode()


def _in_a_tree(tmp_path, name: str, data: bytes, active: ActiveRules):
    """Convert a tree holding only the example at its path (vendor paths are a tree's matter)."""
    from porter.engine.runner import convert_tree

    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_bytes(data)
    [result] = [r for r in convert_tree(tmp_path, active, 1, None, None).results if r.path == name]
    return None, result


@pytest.mark.parametrize("target,rule,example", list(_cases()))
def test_example(target, rule, example, tmp_path):
    name = example.file or KINDS[rule.kind].example_file
    assert name, f"{rule.code}: a {rule.kind} example names its file (a path in a tree)"
    # A rule of some lines only (PRT411: deepspeed-mlu on the torch 2.1 line) runs on its newest.
    version = rule.versions[-1] if rule.versions else VERSIONS[target]
    if rule.kind == "op-table" and not table_can_report(target, rule, version):
        pytest.skip(f"{target}'s API table has no entry {rule.code} reports (its example waits for one)")
    active = ActiveRules(load_rules(target), Selection(version, (rule.code, *example.also)))
    data = _text(example.setup, example.before)
    run = (lambda n, d, a: _in_a_tree(tmp_path, n, d, a)) if rule.kind == "vendor-path" else convert_bytes
    _, result = run(name, data, active)
    assert result.status in ("changed", "unchanged"), f"{name}: {result.status}: {result.reason}"
    out = result.new_bytes if result.new_bytes is not None else data
    expected = _text(example.setup, example.after if example.after is not None else example.before)
    assert out.decode() == expected.decode()

    fired = {e.rule for e in result.edits} | {f.rule for f in result.findings}
    fired |= {f.rule for f in check_bytes(name, data, active).findings}  # the op scan runs in check
    assert rule.code in fired, f"{rule.code} did not fire on its example"

    _, again = convert_bytes(name, out, active)
    assert not again.edits, f"not idempotent: {[(e.rule, e.line, e.after) for e in again.edits]}"
    if name.endswith(".py"):
        ast.parse(out)


def test_examples_are_checked_when_rules_load(tmp_path):
    """A misspelt example key is an error naming the file, not an example nobody runs."""
    from porter.rules import RuleError, load_rule_files

    path = tmp_path / "r.toml"
    path.write_text(
        '[[rule]]\ncode = "PRT999"\nname = "x-y"\nkind = "env-var"\nnames = ["A"]\nsummary = "s"\nwhy = "w"\n'
        'severity = "info"\napplicability = "manual"\nexamples = [{ before = "x", afer = "y" }]\n'
    )
    with pytest.raises(RuleError, match=r"r\.toml.*unknown key 'afer'"):
        load_rule_files([path], "mlu")
