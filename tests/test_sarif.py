"""`porter check --format sarif`: valid SARIF 2.1.0 that GitHub code scanning accepts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from porter.commands.check import check
from porter.rules import TARGETS

jsonschema = pytest.importorskip("jsonschema")

SCHEMA = Path(__file__).resolve().parents[1] / "tools/vendor_data/sarif/sarif-schema-2.1.0.json"
TREE = Path(__file__).resolve().parents[1] / "fixtures" / "check" / "tree"


@pytest.fixture(scope="module")
def validator():
    if not SCHEMA.is_file():
        pytest.skip(f"no SARIF schema at {SCHEMA}")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def sarif(src: Path, *args: str) -> dict:
    result = CliRunner().invoke(check, [str(src), "--format", "sarif", *args], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("target", TARGETS)
def test_validates_against_the_schema(validator, target):
    log = sarif(TREE, "--target", target)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def test_empty_run_validates(validator, tmp_path):
    (tmp_path / "a.py").write_text("print('no torch here')\n")
    log = sarif(tmp_path, "--target", "mlu")
    assert log["runs"][0]["results"] == []
    assert not list(validator.iter_errors(log))


def test_rules_results_locations_and_fingerprints():
    log = sarif(TREE, "--target", "mlu")
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "porter" and driver["version"]
    rules = {r["id"]: r for r in driver["rules"]}
    prt901 = rules["PRT901"]
    assert prt901["name"] == "unsupported-api"
    assert prt901["shortDescription"]["text"] and prt901["fullDescription"]["text"] and prt901["help"]["text"]
    assert prt901["defaultConfiguration"]["level"] == "error"
    results = run["results"]
    assert {r["ruleId"] for r in results} == set(rules)
    assert all(driver["rules"][r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    compile_ = next(r for r in results if "torch.compile" in r["message"]["text"])
    loc = compile_["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "train.py", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {"startLine": 17, "startColumn": 13, "endLine": 17, "endColumn": 26}
    assert compile_["level"] == "error"
    assert {r["level"] for r in results} == {"error", "warning", "note"}
    prints = [r["partialFingerprints"]["porter/v1"] for r in results]
    assert len(set(prints)) == len(prints)


def test_fingerprints_survive_moved_lines(tmp_path):
    src = Path(shutil.copytree(TREE, tmp_path / "tree"))
    before = {r["partialFingerprints"]["porter/v1"] for r in sarif(src, "--target", "mlu")["runs"][0]["results"]}
    path = src / "train.py"
    path.write_text("\n\n\n" + path.read_text())
    after = {r["partialFingerprints"]["porter/v1"] for r in sarif(src, "--target", "mlu")["runs"][0]["results"]}
    assert before == after
