"""YAML anchors and aliases: each node is walked once, where its anchor is, and a document whose
aliases expand past a sane bound (an alias bomb) is skipped with its figures, not walked."""

from __future__ import annotations

import time

import pytest

from porter.engine.pipeline import convert_bytes
from porter.filetypes import _configtree, _yamltree
from porter.filetypes._configtree import iter_pairs
from porter.filetypes._yamltree import AliasBomb, parse_yaml
from porter.rules import ActiveRules, Selection, load_rules


def _convert(name: str, data: bytes):
    return convert_bytes(name, data, ActiveRules(load_rules("mlu"), Selection()))[1]


def _aliases(levels: int, width: int) -> str:
    """A training config whose anchored mapping (holding `device: cuda`) is aliased `width`
    times per level, `levels` levels deep: width ** levels copies of it once expanded."""
    lines = ["model_name_or_path: x", "l0: &l0", "  device: cuda", "  bf16: true"]
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def test_aliases_are_walked_once(monkeypatch):
    (doc,) = parse_yaml(_aliases(levels=4, width=3))  # 81 copies of l0 once expanded
    walked = []
    entries = _configtree._entries
    monkeypatch.setattr(_configtree, "_entries", lambda node, path: walked.append(node) or entries(node, path))
    pairs = [(".".join(path), key.value) for path, key, _ in iter_pairs(doc)]
    # every pair once, under the anchor's own path; every container once
    assert pairs == [
        ("model_name_or_path", "model_name_or_path"),
        ("l0", "l0"),
        ("l0.device", "device"),
        ("l0.bf16", "bf16"),
        ("l1", "l1"),
        ("l2", "l2"),
        ("l3", "l3"),
        ("l4", "l4"),
    ]
    assert len(walked) == 6  # the document, l0..l4
    assert len({id(node) for node in walked}) == len(walked)


def test_an_aliased_value_is_one_edit_where_its_anchor_is():
    result = _convert("train.yaml", _aliases(levels=3, width=3).encode())
    assert result.status == "changed", result.reason
    assert [(e.line, e.after) for e in result.edits] == [(3, "  device: mlu")]
    assert result.new_bytes.count(b"cuda") == 0


def test_an_alias_bomb_is_skipped_with_its_figures_not_walked():
    # 9 levels of 9 aliases: 387,420,489 copies of the anchored mapping in 1.4 KB (59 s before)
    bomb = _aliases(levels=9, width=9).encode()
    started = time.perf_counter()
    result = _convert("train.yaml", bomb)
    assert time.perf_counter() - started < 1.0
    assert result.status == "skipped"
    size = 5  # l0: the mapping, two keys, two values
    total = 1 + 2 + 1 + size  # the document, model_name_or_path and its value, l0
    for _ in range(9):
        size = 1 + 9 * size
        total += 1 + size
    assert f"holds 27 nodes, and its aliases expand it to {total:,} (an alias bomb)" in result.reason
    assert result.new_bytes is None


def test_many_entries_merging_one_block_are_not_a_bomb(monkeypatch):
    # A file whose entries merge one defaults block grows a few times over, past the size
    # bound (made small here) but not past the ratio: walked, once.
    monkeypatch.setattr(_yamltree, "EXPANDED_LIMIT", 1_000)
    entries = "".join(f"run{i}:\n  <<: *defaults\n  seed: {i}\n" for i in range(200))
    text = "model_name_or_path: x\ndefaults: &defaults\n" + "".join(f"  k{j}: {j}\n" for j in range(30)) + entries
    (doc,) = parse_yaml(text)
    assert sum(1 for _ in iter_pairs(doc)) == 2 + 30 + 200 * 3
    with pytest.raises(AliasBomb):  # while aliases by powers are one
        parse_yaml(_aliases(levels=3, width=20))
