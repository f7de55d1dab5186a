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
    assert any(re.search(r'pip install "cuda-porter @ git\+https://', s.get("run", "")) for s in steps)


def test_pre_commit_hook_passes_filenames_to_porter_check():
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "porter-check" and hook["language"] == "python"
    assert hook["entry"] == "porter check --force-exclude" and hook["pass_filenames"] is True


@pytest.mark.slow
def test_pre_commit_hook_from_a_local_clone_gates_a_real_repository(tmp_path):
    """pre-commit installs porter's hook from a clone of this repository (its committed HEAD),
    passes the staged files, honours [tool.porter], and fails on a newly staged unsupported op."""
    import os
    import subprocess
    import sys

    pytest.importorskip("pre_commit")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("this checkout is not a git repository: pre-commit needs one to clone")
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    clone = tmp_path / "porter-clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, env=env)
    project = tmp_path / "project"
    project.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=project, check=True, env=env, capture_output=True)

    def hook() -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )

    git("init", "-q")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {clone}\n    rev: {head.stdout.strip()}\n    hooks:\n      - id: porter-check\n"
    )
    (project / "pyproject.toml").write_text('[tool.porter]\ntarget = "mlu"\n')
    (project / "train.py").write_text("import torch\nx = torch.zeros(1).cuda()\n")  # converted, not an error
    git("add", "-A")
    first = hook()
    assert first.returncode == 0, first.stdout + first.stderr
    git("commit", "-q", "-m", "base")
    (project / "compiled.py").write_text("import torch\nm = torch.compile(torch.nn.Linear(2, 2))\n")
    git("add", "compiled.py")
    failed = hook()
    assert failed.returncode == 1 and "PRT901" in failed.stdout and "compiled.py" in failed.stdout
    assert "train.py" not in failed.stdout  # pre-commit passed the staged file alone
    (project / "pyproject.toml").write_text('[tool.porter]\ntarget = "mlu"\nignore = ["PRT901"]\n')
    git("add", "pyproject.toml")
    assert hook().returncode == 0  # the configuration is honoured
