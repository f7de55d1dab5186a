"""Rule files are validated: errors name the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.rules import RuleError, load_rule_files, load_rules

GOOD = '''
[[rule]]
code = "PRT101"
name = "torch-cuda-namespace"
kind = "qualified-name"
summary = "s"
why = "w"
severity = "warning"
applicability = "safe"
match = ["torch.cuda"]
examples = [{ before = "torch.cuda.synchronize()" }]
'''


def _write(tmp_path: Path, text: str, name: str = "r.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_good_file_loads(tmp_path):
    rules = load_rule_files([_write(tmp_path, GOOD)], "mlu")
    assert [r.code for r in rules.rules] == ["PRT101"]


@pytest.mark.parametrize(
    "change, key",
    [
        (lambda t: t.replace('summary = "s"\n', ""), "summary"),
        (lambda t: t + 'colour = "red"\n', "colour"),
        (lambda t: t.replace('match = ["torch.cuda"]\n', ""), "match"),
        (lambda t: t.replace('kind = "qualified-name"', 'kind = "teleport"'), "kind"),
        (lambda t: t.replace('severity = "warning"', 'severity = "fatal"'), "severity"),
        (lambda t: t.replace('code = "PRT101"', 'code = "X1"'), "code"),
        (lambda t: t.replace('match = ["torch.cuda"]', 'match = "torch.cuda"'), "match"),
    ],
)
def test_errors_name_file_and_key(tmp_path, change, key):
    path = _write(tmp_path, change(GOOD))
    with pytest.raises(RuleError) as err:
        load_rule_files([path], "mlu")
    assert str(path) in str(err.value) and f"'{key}'" in str(err.value)


def test_duplicate_code_across_files(tmp_path):
    a = _write(tmp_path, GOOD, "a.toml")
    b = _write(tmp_path, GOOD.replace("torch-cuda-namespace", "other-name"), "b.toml")
    with pytest.raises(RuleError, match="duplicate code PRT101"):
        load_rule_files([a, b], "mlu")


def test_broken_toml_names_file(tmp_path):
    path = _write(tmp_path, "[[rule]\ncode = ")
    with pytest.raises(RuleError, match="not valid TOML"):
        load_rule_files([path], "mlu")


@pytest.mark.parametrize("target", ["mlu", "hip"])
def test_shipped_rules_load(target):
    rules = load_rules(target)
    assert rules.rules and all(r.examples for r in rules.rules)
