"""A Python file's analysis runs without cycle collections, and its syntax tree is freed by
reference counting when the analysis returns: the collector never scans the millions of
objects of a large module's tree (15% of a 4 MB module's convert), and nothing keeps the
tree alive after it. No timing: collections and surviving nodes are counted."""

from __future__ import annotations

import ast
import gc

from porter.python import analyze
from porter.rules import ActiveRules, Selection, load_rules

_MODULE = b"import torch\n" + b"".join(
    b"def f%d(x):\n    return x.cuda() if torch.cuda.is_available() else x\n" % i for i in range(2000)
)


def _names() -> int:
    return sum(1 for o in gc.get_objects() if type(o) is ast.Name)


def test_the_analysis_runs_without_collections_and_leaves_no_tree(monkeypatch):
    rules = ActiveRules(load_rules("mlu"), Selection())
    collecting: list[bool] = []  # whether the collector could run, at each step of the analysis
    for name in ("parse", "rule_findings", "api_uses"):
        real = getattr(analyze, name)
        monkeypatch.setattr(
            analyze, name, lambda *a, _real=real, **k: collecting.append(gc.isenabled()) or _real(*a, **k)
        )
    gc.collect()
    before = _names()
    threshold = gc.get_threshold()
    gc.set_threshold(0)  # no automatic collection at all, even once the analysis is done
    try:
        found = analyze.find_python("m.py", _MODULE, rules)
        left = _names()
    finally:
        gc.set_threshold(*threshold)
    assert len([f for f in found.findings if f.edit]) >= 4000
    assert collecting == [False, False, False]
    assert gc.isenabled()
    assert left == before  # the tree went with the analysis, freed without a collection
