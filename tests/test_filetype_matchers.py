"""Every file type outside Python matches its kinds through one table of Matchers (porter/rules/
kinds.py), which its find function reads when it runs: a kind declared for a file type is in
that type's table, a table names only declared kinds and each once, and swapping a table's
matcher changes what the file type finds."""

from __future__ import annotations

import pytest

from porter.core.model import Finding
from porter.engine.registry import file_type, type_for
from porter.engine.vendor_paths import PATH_KINDS
from porter.filetypes import compose, conda, docker, pyproject, requirements, setup_cfg, shell
from porter.filetypes import _configs, _notebook_cells
from porter.python.kinds import PYTHON_KINDS
from porter.rules import ActiveRules, load_rules
from porter.rules.kinds import KINDS, Matcher

# Each file type's table (configs: YAML and JSON share one).
TABLES = {
    "shell": (shell, "SHELL_KINDS"),
    "dockerfile": (docker, "DOCKERFILE_KINDS"),
    "compose": (compose, "COMPOSE_KINDS"),
    "yaml": (_configs, "CONFIG_KINDS"),
    "json": (_configs, "CONFIG_KINDS"),
    "notebook": (_notebook_cells, "NOTEBOOK_KINDS"),
    "requirements": (requirements, "REQUIREMENTS_KINDS"),
    "pyproject": (pyproject, "PYPROJECT_KINDS"),
    "setup-cfg": (setup_cfg, "SETUP_CFG_KINDS"),
    "conda": (conda, "CONDA_KINDS"),
}
# Kinds matched on a path before its file is read, whatever its type (porter/engine/vendor_paths.py).
PATHS = {m.kind for m in PATH_KINDS}
# Kinds matched elsewhere: by the engine, for every file (its suppression comments:
# porter/engine/reporting.py), and in Python by the op scan (porter/python/opscan.py) and a
# project's codemods (porter/python/codemods.py).
ELSEWHERE = {"suppression-comment", "op-table", "codemod"}


def table(file_type_name: str) -> tuple[Matcher, ...]:
    module, name = TABLES[file_type_name]
    return getattr(module, name)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_table_names_declared_kinds_each_once(name):
    kinds = [m.kind for m in table(name)]
    assert kinds and all(isinstance(m, Matcher) for m in table(name))
    assert set(kinds) <= set(KINDS)
    assert len(kinds) == len(set(kinds)), kinds


def test_every_kind_is_in_the_table_of_its_file_type():
    """A kind's example file names the file type it is for; that type's table matches it."""
    python = {k.name for k in PYTHON_KINDS}
    for kind in KINDS.values():
        if kind.name in ELSEWHERE | PATHS:
            continue
        where = type_for(kind.example_file, b"")
        assert where is not None, kind.name
        if where.name == "python":
            assert kind.name in python, kind.name
        else:
            assert kind.name in {m.kind for m in table(where.name)}, (kind.name, where.name)


def test_the_tables_cover_every_kind_not_matched_elsewhere():
    tabled = {m.kind for name in TABLES for m in table(name)} | {k.name for k in PYTHON_KINDS} | PATHS
    assert tabled | ELSEWHERE == set(KINDS)


# A file of each type that reaches its table with mlu's rules (past its screen and parse).
SAMPLES = {
    "shell": ("run.sh", b"nvidia-smi\n"),
    "dockerfile": ("Dockerfile", b"FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n"),
    "compose": ("docker-compose.yml", b"services:\n  app:\n    image: nvidia/cuda:12.1.0-base\n"),
    "yaml": ("train_args.yaml", b"model_name_or_path: m\ndevice: cuda\n"),
    "json": ("args.json", b'{"model_name_or_path": "m", "device": "cuda"}'),
    "notebook": (
        "notebook.ipynb",
        b'{"cells": [{"cell_type": "code", "metadata": {}, "source": ["torch.cuda.synchronize(\\n"]}], '
        b'"metadata": {}, "nbformat": 4, "nbformat_minor": 5}',
    ),
    "requirements": ("requirements.txt", b"torch==2.1.0\n"),
    "pyproject": ("pyproject.toml", b'[project]\nname = "p"\ndependencies = ["torch==2.1.0"]\n'),
    "setup-cfg": ("setup.cfg", b"[options]\ninstall_requires =\n    torch==2.1.0\n"),
    "conda": ("environment.yml", b"name: e\ndependencies:\n  - python=3.10\n"),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_find_function_reads_its_table_when_it_runs(monkeypatch, name):
    """A matcher swapped into the table is what the file type finds with."""
    path, data = SAMPLES[name]
    assert type_for(path, data[:512]).name == name
    kind = table(name)[0].kind

    def marker(view, rules):
        rule = rules[0]
        return [Finding(rule.code, rule.severity, path, 1, 1, "found by the swapped matcher", None)]

    rules = ActiveRules(load_rules("mlu"))
    module, attr = TABLES[name]
    monkeypatch.setattr(module, attr, (Matcher(kind, marker),))
    found = file_type(name).find(path, data, rules)
    assert [f.message for f in found.findings] == ["found by the swapped matcher"], found.findings


def test_a_tree_s_paths_are_matched_through_their_table(tmp_path, monkeypatch):
    """A path kept for another vendor is what PATH_KINDS says: a matcher swapped in decides."""
    from porter.engine import runner, vendor_paths
    from porter.rules.kinds import Matcher

    (tmp_path / "ascend").mkdir()
    for rel in ("ascend/run.sh", "train.sh"):
        (tmp_path / rel).write_text("export CUDA_VISIBLE_DEVICES=0\n")
    rules = ActiveRules(load_rules("mlu"))

    def changed(root) -> set[str]:
        return {r.path for r in runner.convert_tree(root, rules, jobs=1).results if r.status == "changed"}

    assert changed(tmp_path) == {"train.sh"}  # ascend/run.sh: another vendor's, kept
    every = Matcher("vendor-path", lambda view, rules: [vendor_paths.kept_finding(view.rel, rules[0], "npu")])
    monkeypatch.setattr(runner, "PATH_KINDS", (every,))
    assert changed(tmp_path) == set()
