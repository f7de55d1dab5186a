"""The engine's safety checks, each pinned by a test that fails without it.

- overlap dropping (core/edits.select_edits): two edits over the same text are never both
  applied;
- `expect_old` (python/context.FileContext.finding): an edit whose span does not hold the
  text the rule saw is not made;
- the parse-after-fix refusal (core/edits.fix with the file type's `verify`): a Python file
  that would not parse after porter's edits is left as it was and reported failed;
- the TOML verify of pyproject.toml, the JSON verify of notebooks and JSON configs and the
  YAML verify of YAML configs: the same for a file that would not load.
"""

from __future__ import annotations

import ast

import pytest

from porter.core.edits import Found, fix
from porter.core.model import Edit, Finding
from porter.engine.pipeline import convert_bytes
from porter.python.context import FileContext
from porter.rules import ActiveRules, load_rule_files, load_rules


def _finding(rule: str, start: int, end: int, replacement: str) -> Finding:
    return Finding(rule, "warning", "t.py", 1, start + 1, "m", edit=Edit(rule, start, end, replacement))


def test_overlapping_edits_are_dropped_not_both_applied():
    text = "torch.cuda.synchronize()\n"
    wide = _finding("PRT001", 0, 22, "torch.mlu.synchronize")  # torch.cuda.synchronize
    inner = _finding("PRT002", 6, 10, "xpu")  # the `cuda` inside it
    fixed = fix(Found(text, [inner, wide], str.encode))
    assert fixed.new_text == "torch.mlu.synchronize()\n"
    assert fixed.dropped == 1
    assert [f.rule for f in fixed.applied] == ["PRT001"]


def test_an_edit_whose_span_does_not_hold_the_expected_text_is_not_made():
    text = "import torch\ntorch.cuda.synchronize()\n"
    ctx = FileContext.build("t.py", text, ast.parse(text), "mlu")
    rule = load_rules("mlu").by_code("PRT101")
    at = text.index("torch.cuda")
    right = ctx.finding(rule, (at, at + len("torch.cuda")), replacement="torch.mlu", expect_old="torch.cuda")
    assert right.edit is not None  # the control: the span holds the text
    shifted = ctx.finding(rule, (at + 1, at + 1 + len("torch.cuda")), replacement="torch.mlu", expect_old="torch.cuda")
    assert shifted.edit is None
    assert "by hand" in shifted.message


def _rule_file(tmp_path, body: str):
    path = tmp_path / "rules.toml"
    path.write_text(
        '[[rule]]\ncode = "PRT990"\nname = "breaking-rename"\nsummary = "s"\nwhy = "w"\n'
        'severity = "warning"\napplicability = "safe"\nexamples = [{ before = "x" }]\n' + body
    )
    return load_rule_files([path], "mlu")


def test_a_python_edit_that_would_not_parse_is_refused(tmp_path):
    rules = _rule_file(
        tmp_path, 'kind = "qualified-name"\nmatch = ["torch.cuda"]\nreplace = { "torch.cuda" = "torch.(mlu" }\n'
    )
    data = b"import torch\ntorch.cuda.synchronize()\n"
    _, result = convert_bytes("train.py", data, ActiveRules(rules))
    assert result.status == "failed"
    assert result.new_bytes is None
    assert "would break the file" in result.reason


def test_a_pyproject_edit_that_would_not_load_is_refused(monkeypatch):
    import porter.filetypes.pyproject as pyproject
    from porter.rules.kinds import REQUIREMENT_STRING, Matcher

    def breaking(view, rules):
        at = view.text.index("torch")
        return [_finding("PRT413", at, at, '"')]  # an unbalanced quote inside a string

    monkeypatch.setattr(pyproject, "PYPROJECT_KINDS", (Matcher(REQUIREMENT_STRING, breaking),))
    data = b'[project]\nname = "p"\ndependencies = ["torch==2.1.0+cu121"]\n'
    _, result = convert_bytes("pyproject.toml", data, ActiveRules(load_rules("mlu")))
    assert result.status == "failed"
    assert result.new_bytes is None
    assert "invalid TOML" in result.reason


def test_a_notebook_edit_that_would_not_load_is_refused(monkeypatch):
    import porter.filetypes.notebook as notebook
    from porter.core.model import Edit as JsonEdit

    real = notebook._rewrite

    def breaking(text, parts, in_list, edits, ascii_only):
        return [
            (JsonEdit(e.rule, e.start, e.end, e.replacement + ", }"), applied)
            for e, applied in real(text, parts, in_list, edits, ascii_only)
        ]

    monkeypatch.setattr(notebook, "_rewrite", breaking)
    data = (
        b'{"cells": [{"cell_type": "code", "metadata": {}, "source": ["import torch\\n", "torch.cuda.synchronize()"]}], '
        b'"metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    )
    _, result = convert_bytes("a.ipynb", data, ActiveRules(load_rules("mlu")))
    assert result.status == "failed"
    assert "invalid JSON" in result.reason


@pytest.mark.parametrize(
    "name,text",
    [
        ("train.yaml", "model_name_or_path: m\ndevice: cuda\n"),
        ("args.json", '{"model_name_or_path": "m", "device": "cuda"}'),
    ],
)
def test_a_config_edit_that_would_not_load_is_refused(monkeypatch, name, text):
    import dataclasses

    from porter.filetypes import _configs  # YAML and JSON configs match their kinds there

    real = _configs.match_tree
    monkeypatch.setattr(
        _configs,
        "match_tree",
        lambda root, rules: [
            dataclasses.replace(hit, replacement='"unclosed: [') for hit in real(root, rules) if hit.replacement
        ],
    )
    _, result = convert_bytes(name, text.encode(), ActiveRules(load_rules("mlu")))
    assert result.status == "failed", result
    assert "would break the file" in result.reason


def test_copy_new_file_keeps_the_exact_mode_and_refuses_a_pipe(tmp_path):
    """The writer's copy: bytes through the kernel, the source's mode exactly (also the bits
    the umask would take), a named pipe refused at once instead of waited on."""
    import os
    import stat

    from porter.core.files import copy_new_file

    src = tmp_path / "tool.sh"
    src.write_bytes(b"#!/bin/sh\necho hi\n" * 5000)
    os.chmod(src, 0o775)
    copy_new_file(str(src), str(tmp_path / "copy.sh"), umask=0o022)
    assert (tmp_path / "copy.sh").read_bytes() == src.read_bytes()
    assert stat.S_IMODE((tmp_path / "copy.sh").stat().st_mode) == 0o775
    copy_new_file(str(src), str(tmp_path / "new.sh"), b"converted\n", umask=0o022)
    assert (tmp_path / "new.sh").read_bytes() == b"converted\n"
    assert stat.S_IMODE((tmp_path / "new.sh").stat().st_mode) == 0o775
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(OSError):
        copy_new_file(str(tmp_path / "pipe"), str(tmp_path / "pipe-copy"))
    assert not (tmp_path / "pipe-copy").exists()
    os.symlink(tmp_path / "elsewhere", tmp_path / "link")
    with pytest.raises(OSError):  # never written through a link at the destination
        copy_new_file(str(src), str(tmp_path / "link"))
    assert not (tmp_path / "elsewhere").exists()
