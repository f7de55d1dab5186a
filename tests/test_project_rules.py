"""A repository's own rules: TOML files named by `rules` in [tool.porter], with porter's kinds
and porter's validation, applied by check and convert like porter's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import porter
from porter.cli import main

RULE = """
[[rule]]
code = "PRT801"
name = "house-fused-adam"
kind = "qualified-name"
summary = "Our CUDA-only fused Adam: use torch.optim.AdamW on MLU"
why = "mylib.cuda_kernels is built with nvcc only."
suggestion = "Use torch.optim.AdamW(fused=False)."
severity = "error"
applicability = "manual"
match = ["mylib.cuda_kernels.fused_adam"]
examples = [{ before = "opt = fused_adam(params)" }]
"""
SOURCE = (
    "import torch\nfrom mylib.cuda_kernels import fused_adam\n\nopt = fused_adam(torch.nn.Linear(2, 2).parameters())\n"
)


def project(
    tmp_path: Path, rule: str = RULE, config: str = 'target = "mlu"\nrules = ["porter_rules/*.toml"]\n'
) -> Path:
    (tmp_path / "porter_rules").mkdir(exist_ok=True)
    (tmp_path / "porter_rules" / "house.toml").write_text(rule)
    (tmp_path / "porter.toml").write_text(config)
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "train.py").write_text(SOURCE)
    return tmp_path


def check(root: Path, *args: str):
    return CliRunner().invoke(
        main, ["check", str(root / "src"), "--no-cache", "--format", "json", *args], catch_exceptions=False
    )


def test_project_rule_fires_in_check_and_convert_and_can_be_selected(tmp_path):
    root = project(tmp_path)
    result = check(root)
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    found = [(f["path"], f["line"], f["severity"]) for f in data["findings"] if f["rule"] == "PRT801"]
    assert found == [("train.py", 4, "error")]  # the call (its import is the same thing to act on)
    assert data["rules"]["PRT801"]["name"] == "house-fused-adam"
    assert {f["rule"] for f in json.loads(check(root, "--select", "PRT801").stdout)["findings"]} == {"PRT801"}
    # Without the configuration, the rule does not exist: selecting it is a usage error.
    isolated = check(root, "--isolated", "-t", "mlu", "--select", "PRT801")
    assert isolated.exit_code == 2 and "unknown rule code 'PRT801'" in isolated.output
    done = porter.convert(root / "src", out=tmp_path / "out")
    assert [f.line for f in done.findings if f.rule == "PRT801"] == [4]


def test_project_rules_for_other_targets_do_not_apply(tmp_path):
    root = project(tmp_path, 'targets = ["hip"]\n' + RULE)
    assert "PRT801" not in {f["rule"] for f in json.loads(check(root).stdout)["findings"]}
    assert "PRT801" in {f.rule for f in porter.check(root / "src", target="hip").findings}


@pytest.mark.parametrize(
    "rule,needle",
    [
        pytest.param(
            RULE.replace("PRT801", "PRT101"), "key 'code': PRT101 is a code of porter's own rules", id="porter-code"
        ),
        pytest.param(
            RULE.replace('kind = "qualified-name"', 'kind = "regex"'), "key 'kind' has unknown value 'regex'", id="kind"
        ),
        pytest.param(RULE.replace("match = ", "matches = "), "unknown key 'matches'", id="field"),
        pytest.param(RULE.replace('severity = "error"', 'severity = "fatal"'), "key 'severity'", id="severity"),
    ],
)
def test_bad_project_rules_exit_2_naming_the_file_and_key(tmp_path, rule, needle):
    root = project(tmp_path, rule)
    result = check(root)
    assert result.exit_code == 2
    assert needle in result.output and str(root / "porter_rules" / "house.toml") in result.output


def test_rules_pattern_that_matches_nothing_is_an_error(tmp_path):
    root = project(tmp_path, config='target = "mlu"\nrules = ["rules_missing/*.toml"]\n')
    result = check(root)
    assert result.exit_code == 2 and "key 'rules': 'rules_missing/*.toml' matches no file" in result.output
