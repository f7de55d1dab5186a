"""The tree run's second step: a literal kept as a named constant in one module is kept where
another module hands it to that module (nanotron: `nanotron_timer("step", "cuda")` is read as
`TimerType("cuda")` in the module whose `TimerType.CUDA = "cuda"` porter keeps; rewritten to
"mlu", every training step raised ValueError). Everything else in those files is ported as
before, and the step gives the same answer from the cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.engine.cache import ResultCache
from porter.engine.kept_constants import module_name
from porter.engine.runner import check_tree, convert_tree
from porter.rules import ActiveRules, Selection, load_rules

TIMERS = """\
from enum import Enum

import torch


class TimerType(Enum):
    CPU = "cpu"
    CUDA = "cuda"


def timer(name, timer_type=TimerType.CUDA):
    kind = TimerType(timer_type)
    return torch.cuda.Event(enable_timing=True) if kind == TimerType.CUDA else name
"""

TRAIN = """\
import torch

from pkg.timers import timer


def step(batch):
    timer("step", "cuda")
    return batch.to("cuda") + torch.zeros(1, device="cuda")
"""

PORTED_TRAIN = """\
import torch
import torch_mlu  # noqa: F401

from pkg.timers import timer


def step(batch):
    timer("step", "cuda")
    return batch.to("mlu") + torch.zeros(1, device="mlu")
"""


def _tree(root: Path, with_enum: bool = True) -> Path:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "__init__.py").write_text("")
    timers = TIMERS if with_enum else TIMERS.replace('    CUDA = "cuda"\n', "")
    (root / "src" / "pkg" / "timers.py").write_text(timers)
    (root / "train.py").write_text(TRAIN)
    return root


def _converted(src: Path, cache: ResultCache | None = None) -> dict[str, bytes | None]:
    run = convert_tree(src, ActiveRules(load_rules("mlu")), jobs=1, cache=cache)
    return {r.path: r.new_bytes for r in run.results}


@pytest.mark.parametrize("cached", [False, True])
def test_a_literal_handed_to_the_module_that_keeps_it_is_kept(tmp_path, cached):
    src = _tree(tmp_path / "repo")
    cache = ResultCache(tmp_path / "cache") if cached else None
    for _ in range(2 if cached else 1):  # the second run is answered from the cache
        out = _converted(src, cache)
        assert out["train.py"].decode() == PORTED_TRAIN
        assert b'CUDA = "cuda"' in (out["src/pkg/timers.py"] or b'CUDA = "cuda"')


def test_the_kept_literal_is_a_note_in_check(tmp_path):
    """A note (the decision is the constant's, whose own finding asks for it), shown when the
    code is named; not a rewrite."""
    src = _tree(tmp_path / "repo")
    by_default = check_tree(src, ActiveRules(load_rules("mlu")), jobs=1)
    assert not [f for r in by_default if r.path == "train.py" for f in r.findings if f.line == 7]
    named = check_tree(src, ActiveRules(load_rules("mlu"), Selection(extend=("PRT106",))), jobs=1)
    notes = [f for r in named if r.path == "train.py" for f in r.findings if f.line == 7]
    assert [(f.rule, f.severity) for f in notes] == [("PRT106", "info")]
    assert "pkg.timers.timer" in notes[0].message


def test_without_the_constant_the_literal_is_ported(tmp_path):
    out = _converted(_tree(tmp_path / "repo", with_enum=False))
    assert b'timer("step", "mlu")' in out["train.py"]


def test_module_names():
    assert module_name("src/pkg/a/b.py") == "pkg.a.b"
    assert module_name("pkg/__init__.py") == "pkg"
    assert module_name("train.py") == "train"
    assert module_name("my-scripts/run.py") is None  # not importable by that path
    assert module_name("README.md") is None
