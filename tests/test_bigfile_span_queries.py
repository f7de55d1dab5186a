"""device-guard answers its span questions in log time, with the pairwise answers.

No timing (benchmarks/bigfile.py measures): the sweep functions are checked against the
pairwise tests they replace on random spans, and device-guard's comparisons of positions
are counted on a module of many dispatch chains, which grew with their square.
"""

from __future__ import annotations

import random
from dataclasses import replace

from porter.engine.pipeline import convert_bytes
from porter.python import analyze
from porter.python.kinds import device_guard
from porter.python.kinds._span_queries import SpanSet, first_containing
from porter.rules import ActiveRules, Selection, load_rules


def _random_spans(rng: random.Random, count: int, width: int) -> list[tuple[int, int]]:
    spans = []
    for _ in range(count):
        start = rng.randrange(width)
        spans.append((start, start + rng.choice([0, 0, 1, 2, rng.randrange(width // 2 + 1)])))
    return spans


def test_span_set_answers_as_the_pairwise_tests():
    rng = random.Random(33)
    for _ in range(300):
        spans = _random_spans(rng, rng.randrange(0, 12), 40)
        queries = _random_spans(rng, 30, 45)
        found = SpanSet(spans)
        for s, e in queries:
            assert found.overlaps(s, e) == any(a < e and s < b for a, b in spans)
            assert found.contains(s, e) == any(a <= s and e <= b for a, b in spans)


def test_first_containing_is_the_first_region_in_list_order_that_holds_the_span():
    rng = random.Random(17)
    for _ in range(300):
        regions = _random_spans(rng, rng.randrange(0, 12), 40)  # overlapping, nested, repeated, empty
        spans = _random_spans(rng, 30, 45)
        expected = [next((i for i, (a, b) in enumerate(regions) if a <= s and e <= b), None) for s, e in spans]
        assert first_containing(regions, spans) == expected


class _CountedInt(int):
    """An edit position that counts the comparisons it takes part in."""

    compared = 0

    def _count(op):
        def compare(self, other):
            _CountedInt.compared += 1
            return op(int(self), int(other))

        return compare

    __lt__ = _count(int.__lt__)
    __le__ = _count(int.__le__)
    __gt__ = _count(int.__gt__)
    __ge__ = _count(int.__ge__)


def _comparisons(monkeypatch, chains: int) -> int:
    """Comparisons of edit positions device-guard makes on a module of `chains` device dispatch
    chains, each with an edit inside its CUDA branch (kept) and a check outside any chain."""
    block = (
        "if is_torch_npu_available():\n    device = 'npu'\nelif torch.cuda.is_available():\n"
        "    x = torch.ones(1).cuda()\nprint(torch.cuda.is_available())\n"
    )
    source = "import torch\nfrom transformers.utils import is_torch_npu_available\n" + block * chains
    real = device_guard.finalize

    def counted(ctx, rules, findings):
        findings = [
            replace(f, edit=replace(f.edit, start=_CountedInt(f.edit.start), end=_CountedInt(f.edit.end)))
            if f.edit
            else f
            for f in findings
        ]
        _CountedInt.compared = 0
        out = real(ctx, rules, findings)
        counted.seen = _CountedInt.compared
        return out

    counting = tuple(
        replace(k, finalize=counted) if k.name == device_guard.KIND.name else k for k in analyze.PYTHON_KINDS
    )
    monkeypatch.setattr(analyze, "PYTHON_KINDS", counting)
    new = convert_bytes("m.py", source.encode(), ActiveRules(load_rules("mlu"), Selection()))[1].new_bytes.decode()
    # Each chain gets an mlu branch (a converted copy), its CUDA branch is kept, and the check
    # outside it is converted in place.
    assert new.count("elif torch.mlu.is_available():\n    x = torch.ones(1).mlu()\n") == chains
    assert new.count("elif torch.cuda.is_available():\n    x = torch.ones(1).cuda()\n") == chains
    assert new.count("print(torch.mlu.is_available())") == chains
    return counted.seen


def test_device_guard_compares_each_edit_with_a_few_regions_not_all(monkeypatch):
    small, large = _comparisons(monkeypatch, 40), _comparisons(monkeypatch, 160)
    # Four times the chains: pairwise tests made sixteen times the comparisons; a sweep and
    # bisection make a little over four times.
    assert large < 7 * small, (small, large)
