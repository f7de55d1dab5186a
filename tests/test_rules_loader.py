"""Rule files are validated: errors name the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.rules import TARGETS, RuleError, load_rule_files, load_rules

GOOD = """
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
"""


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


OP_RULE = GOOD.replace('kind = "qualified-name"', 'kind = "op-table"').replace(
    'match = ["torch.cuda"]', 'statuses = ["unsupported"]\nuses = ["api"]'
)


@pytest.mark.parametrize(
    "text, key, value",
    [
        (OP_RULE.replace('statuses = ["unsupported"]', 'statuses = ["unsuported"]'), "statuses", "unsuported"),
        (OP_RULE.replace('uses = ["api"]', 'uses = ["apy"]'), "uses", "apy"),
        (OP_RULE + 'severity_by_status = { partial = "fatal" }\n', "severity_by_status", "fatal"),
        (OP_RULE + 'severity_by_status = { parital = "info" }\n', "severity_by_status", "parital"),
        (
            GOOD.replace('kind = "qualified-name"', 'kind = "config-key"').replace(
                'match = ["torch.cuda"]', 'keys = ["bf16"]\nconfigs = ["trainig"]'
            ),
            "configs",
            "trainig",
        ),
        (
            GOOD.replace('kind = "qualified-name"', 'kind = "library-import"').replace(
                'match = ["torch.cuda"]', 'actions = ["dorp"]'
            ),
            "actions",
            "dorp",
        ),
    ],
    ids=["op-status", "op-use", "severity-value", "severity-key", "config-type", "package-action"],
)
def test_values_outside_a_fields_choices_are_errors(tmp_path, text, key, value):
    """A misspelt value would make the rule match nothing, in convert as in check."""
    path = _write(tmp_path, text)
    with pytest.raises(RuleError) as err:
        load_rule_files([path], "mlu")
    assert str(path) in str(err.value) and f"'{key}'" in str(err.value) and repr(value) in str(err.value)


def test_a_rule_named_as_data_source_must_exist_and_be_of_its_kind(tmp_path):
    shell = (
        GOOD.replace('code = "PRT101"', 'code = "PRT501"')
        .replace("torch-cuda-namespace", "shell-env")
        .replace('kind = "qualified-name"', 'kind = "shell-env-var"')
        .replace('match = ["torch.cuda"]', 'from_rule = "PRT201"')
    )
    path = _write(tmp_path, shell)
    with pytest.raises(RuleError, match="'from_rule' must name a rule of kind 'env-var'"):
        load_rule_files([path], "mlu")
    env = (
        GOOD.replace('code = "PRT101"', 'code = "PRT201"')
        .replace("torch-cuda-namespace", "env")
        .replace('kind = "qualified-name"', 'kind = "env-var"')
        .replace('match = ["torch.cuda"]', 'names = ["CUDA_VISIBLE_DEVICES"]')
    )
    assert {r.code for r in load_rule_files([path, _write(tmp_path, env, "env.toml")], "mlu").rules} == {
        "PRT201",
        "PRT501",
    }


def test_loading_rules_imports_no_pipeline():
    """The rule model sits below every pipeline: `porter rules` needs neither tree-sitter nor
    YAML, and the loader cannot reach code that would import it back."""
    import subprocess
    import sys

    code = (
        "import sys; from porter.rules import load_rules; load_rules('mlu'); load_rules('hip'); "
        "print(sorted(m for m in sys.modules if m.startswith(('porter.', 'tree_sitter', 'yaml'))))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "tree_sitter" not in loaded and "yaml" not in loaded
    assert all(m.startswith(("'porter.rules", "'porter.core")) for m in loaded.strip("[]\n").split(", ")), loaded


def test_duplicate_code_across_files(tmp_path):
    a = _write(tmp_path, GOOD, "a.toml")
    b = _write(tmp_path, GOOD.replace("torch-cuda-namespace", "other-name"), "b.toml")
    with pytest.raises(RuleError, match="duplicate code PRT101"):
        load_rule_files([a, b], "mlu")


def test_broken_toml_names_file(tmp_path):
    path = _write(tmp_path, "[[rule]\ncode = ")
    with pytest.raises(RuleError, match="not valid TOML"):
        load_rule_files([path], "mlu")


@pytest.mark.parametrize("target", TARGETS)
def test_shipped_rules_load(target):
    rules = load_rules(target)
    assert rules.rules and all(r.examples for r in rules.rules)
