"""The CI files porter ships: the example workflow (validated against the GitHub workflow
schema that check-jsonschema vendors from SchemaStore, plus what it must do for code
scanning) and the pre-commit hook."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "examples" / "github-workflow-porter-check.yml"
FORK_GUARD = "github.event.pull_request.head.repo.full_name == github.repository || github.event_name != 'pull_request'"
# Current major versions of the actions the workflow uses.
ACTIONS = {"actions/checkout": "v4", "actions/setup-python": "v5", "github/codeql-action/upload-sarif": "v3"}


def workflow() -> dict:
    # PyYAML reads the `on:` key as the boolean True (YAML 1.1); the schema wants "on".
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    if True in data:
        data["on"] = data.pop(True)
    return data


def test_workflow_is_valid_against_the_github_workflow_schema():
    resources = pytest.importorskip("importlib.resources")
    pytest.importorskip("check_jsonschema")
    jsonschema = pytest.importorskip("jsonschema")
    schema_file = resources.files("check_jsonschema") / "builtin_schemas" / "vendor" / "github-workflows.json"
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    jsonschema.validate(workflow(), schema)
    broken = workflow()
    broken["jobs"]["porter"]["stepz"] = broken["jobs"]["porter"].pop("steps")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_workflow_permissions_fork_guard_and_action_versions():
    data = workflow()
    assert data["permissions"] == {"contents": "read", "security-events": "write", "actions": "read"}
    steps = data["jobs"]["porter"]["steps"]
    for step in steps:
        uses = step.get("uses")
        if uses:
            name, _, version = uses.partition("@")
            assert ACTIONS.get(name) == version, uses
    sarif = [s for s in steps if "--format sarif" in s.get("run", "") or "upload-sarif" in s.get("uses", "")]
    assert len(sarif) == 2 and all(s.get("if") == FORK_GUARD for s in sarif)
    annotate = [s for s in steps if "--format github" in s.get("run", "")]
    assert annotate and "if" not in annotate[0]  # forks get annotations and the failing status
    assert any(re.search(r"pip install cuda-porter\b", s.get("run", "")) for s in steps)


def test_pre_commit_hook_passes_filenames_to_porter_check():
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "porter-check" and hook["language"] == "python"
    assert hook["entry"] == "porter check --force-exclude" and hook["pass_filenames"] is True
