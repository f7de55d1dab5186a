"""Requirements, pyproject.toml, setup.cfg, setup.py and container files: the file-level promises.

The rule fixtures (fixtures/rules/<target>/PRT41x, PRT53x) check each rule's edits and
findings; these tests check what holds for every file of a type: bad input is reported and
copied, line endings and includes survive, a dropped requirement can be restored, edited
files still load, and each file type is claimed by the right handler.
"""

from __future__ import annotations

import ast
import tomllib

import pytest

from porter.engine.pipeline import convert_bytes
from porter.engine.registry import type_for
from porter.python.kinds import PYTHON_KINDS, requirement_string
from porter.python.analyze import word_screen
from porter.tables.requirement_policy import OUTCOMES, RequirementPolicy
from porter.rules import TARGETS, ActiveRules, load_rules


@pytest.fixture
def setup_py_kind():
    """The Python engine with a fresh word screen (the requirement-string kind is one of its kinds)."""
    assert requirement_string.KIND in PYTHON_KINDS
    word_screen.cache_clear()
    yield
    word_screen.cache_clear()


def convert(rel: str, data: bytes, target: str = "mlu"):
    return convert_bytes(rel, data, ActiveRules(load_rules(target)))


@pytest.mark.parametrize(
    ("rel", "kind"),
    [
        ("requirements.txt", "requirements"),
        ("requirements-dev.txt", "requirements"),
        ("requirements/deepspeed.txt", "requirements"),
        ("reqs/constraints.in", "requirements"),
        ("docs/requirements.in", "requirements"),
        ("pyproject.toml", "pyproject"),
        ("pkg/setup.cfg", "setup-cfg"),
        ("docker/docker-cuda/Dockerfile", "dockerfile"),
        ("docker/Dockerfile.base", "dockerfile"),
        ("docker/Dockerfile-cu121", "dockerfile"),
        ("Dockerfile_rocm", "dockerfile"),
        ("build/train.dockerfile", "dockerfile"),
        ("docker/docker-cuda/docker-compose.yml", "compose"),
        ("compose.yaml", "compose"),
        ("setup.py", "python"),
    ],
)
def test_each_file_type_has_its_handler(rel, kind):
    assert type_for(rel, b"").name == kind


@pytest.mark.parametrize("rel", ["MANIFEST.in", "docs/notes.txt", "data/config.yaml", "Dockerfile.md.txt"])
def test_other_files_are_not_claimed(rel):
    found = type_for(rel, b"")
    assert found is None or found.name not in ("requirements", "pyproject", "setup-cfg", "dockerfile", "compose")


@pytest.mark.parametrize(
    ("rel", "data", "problem"),
    [
        ("requirements.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
        ("requirements.txt", "bitsandbytes  # caf\u00e9\n".encode("latin-1"), "UTF-8"),
        ("pyproject.toml", b'[project]\ndependencies = ["bitsandbytes",\n', "invalid TOML"),
        ("setup.cfg", b"[options]\ninstall_requires =\n    bitsandbytes\n[broken\n", "neither"),
        ("Dockerfile", b"FROM nvidia/cuda:12.1.0-base\x00\x01", "binary"),
        ("docker-compose.yml", b'services:\n  app:\n    image: "nvidia/cu', "invalid YAML"),
        ("docker-compose.yml", b"services:\n\tapp:\n    image: x\n", "invalid YAML"),
        ("docker-compose.yml", b"services: {app: {image: nvidia/cuda:12\n", "invalid YAML"),
    ],
)
def test_broken_files_are_reported_and_copied(rel, data, problem):
    _, result = convert(rel, data)
    assert result.status == "skipped"
    assert problem in result.reason and "copied unchanged" in result.reason
    assert result.new_bytes is None


def test_crlf_and_includes_are_kept():
    data = b"-r base.txt\r\n-c constraints.txt\r\ntorch==2.1.0+cu121\r\nbitsandbytes>=0.43\r\npeft\r\n"
    _, result = convert("requirements.txt", data)
    assert result.new_bytes.split(b"\r\n")[:3] == [b"-r base.txt", b"-c constraints.txt", b"torch==2.1.0"]
    assert result.new_bytes.count(b"\r\n") == data.count(b"\r\n")
    assert b"\n" not in result.new_bytes.replace(b"\r\n", b"")


@pytest.mark.parametrize("target", TARGETS)
def test_a_dropped_requirement_can_be_restored(target):
    original = ["  eetq==0.0.1 ; python_version >= '3.9'  # int8", "nvidia-cublas-cu12", "peft"]
    _, result = convert("requirements.txt", ("\n".join(original) + "\n").encode(), target)
    restored = []
    for line in result.new_bytes.decode().splitlines():
        indent = line[: len(line) - len(line.lstrip())]
        body = line.lstrip()
        restored.append(indent + body.split(": ", 2)[2] if body.startswith("# porter PRT410: ") else line)
    assert restored == original
    assert {e.rule for e in result.edits} == {"PRT410"}


def test_pyproject_edits_still_load():
    data = b"""[project]
name = "p"
version = "1"
dependencies = [
    "torch==2.1.0+cu121",
    "bitsandbytes>=0.43",
    'deepspeed>=0.14; sys_platform == "linux"',
]
[project.optional-dependencies]
q = ["bitsandbytes", "eetq"]
[tool.other]
dependencies = ["bitsandbytes"]
"""
    _, result = convert("pyproject.toml", data)
    loaded = tomllib.loads(result.new_bytes.decode())
    assert loaded["project"]["dependencies"] == ["torch==2.1.0", 'deepspeed-mlu>=0.14; sys_platform == "linux"']
    assert loaded["project"]["optional-dependencies"]["q"] == ["bitsandbytes", "eetq"]  # shared line: reported
    assert loaded["tool"]["other"]["dependencies"] == ["bitsandbytes"]
    assert sorted(f.subject for f in result.findings if f.rule == "PRT410") == ["bitsandbytes", "eetq"]


def test_pyproject_with_escapes_is_reported_not_edited():
    data = b'[project]\nname = "p"\nversion = "1"\ndependencies = ["bitsandbytes\\u003E=0.43", "deepspeed"]\n'
    _, result = convert("pyproject.toml", data)
    assert result.status == "unchanged"
    assert {f.rule for f in result.findings} == {"PRT410", "PRT411"}


def test_setup_py_output_parses(setup_py_kind):
    data = b"""from setuptools import setup
BASE = ["torch==2.1.0+cu121", "peft"]
EXTRAS = {
    "ds": [
        "deepspeed>=0.14",
        "bitsandbytes",
    ],
    "q": ["bitsandbytes", "eetq"],
}
setup(name="x", install_requires=BASE + ["accelerate"], extras_require=EXTRAS)
"""
    kind, result = convert("setup.py", data)
    assert kind == "python" and result.status == "changed"
    tree = ast.parse(result.new_bytes)
    extras = next(n.value for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "EXTRAS")
    assert ast.literal_eval(extras) == {"ds": ["deepspeed-mlu>=0.14"], "q": ["bitsandbytes", "eetq"]}
    assert '"torch==2.1.0", "peft"' in result.new_bytes.decode()
    assert sum(f.rule == "PRT410" for f in result.findings) == 2  # the shared line, reported


def test_setup_py_elsewhere_is_untouched(setup_py_kind):
    data = b'import os\nNAMES = ["bitsandbytes"]\nprint(dict(install_requires=None), NAMES)\n'
    _, result = convert("setup.py", data)
    assert result.status == "unchanged" and not result.findings


@pytest.mark.parametrize("target", TARGETS)
def test_every_packaging_and_container_rule_is_usable(target):
    rules = load_rules(target)
    policy = RequirementPolicy.build(list(rules.rules))
    assert set(policy.rules) <= set(OUTCOMES)
    for rule in rules.of_kind("container-env-var"):
        source = rules.by_code(rule.params.from_rule) if rule.params.from_rule is not None else rule
        assert source is not None and source.params.names, rule.code


def test_docker_pip_lines_are_reported_not_edited():
    data = (
        b'FROM python:3.11\nRUN pip install "bitsandbytes>=0.43" deepspeed torch==2.1.0+cu121 \\\n'
        b"    -e . -r requirements.txt\n"
    )
    _, result = convert("Dockerfile", data)
    assert result.status == "unchanged"
    assert [(f.rule, f.line) for f in result.findings if f.rule != "PRT415"] == [
        ("PRT410", 2),
        ("PRT411", 2),
        ("PRT413", 2),
    ]


def test_docker_heredoc_and_comment_lines_are_not_instructions():
    data = (
        b"FROM python:3.11\nRUN python - <<'PY'\nENV CUDA_VISIBLE_DEVICES=0\nPY\n"
        b"RUN echo a && \\\n# ENV CUDA_VISIBLE_DEVICES=1\n    echo b\n"
    )
    _, result = convert("Dockerfile", data)
    assert result.status == "unchanged" and not result.findings
