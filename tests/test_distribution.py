"""The distribution's name: `pip install porter` installs an unrelated 2013 package, so porter
ships as cuda-porter, while the import package and the command stay `porter`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
DIST = "cuda-porter"


def test_distribution_name_is_not_the_taken_one_and_the_command_stays():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == DIST
    assert project["scripts"] == {"porter": "porter.cli:run"}


def test_install_instructions_name_the_distribution_and_install_what_exists():
    """cuda-porter is on no package index: the README and the example workflow install it from
    a checkout or its repository, never `pip install cuda-porter` (fails) or `pip install porter`
    (the unrelated package)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    workflow = (ROOT / "examples" / "github-workflow-porter-check.yml").read_text(encoding="utf-8")
    assert f"**`{DIST}`**" in readme and "pip install ." in readme
    assert f'pip install "{DIST} @ git+https://' in workflow
    for text in (readme, workflow):
        assert f"pip install {DIST}" not in text
        assert "pip install porter" not in text


def test_pre_commit_hook_installs_and_runs_porter():
    yaml = pytest.importorskip("yaml")
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["language"] == "python" and hook["entry"].split()[:2] == ["porter", "check"]
