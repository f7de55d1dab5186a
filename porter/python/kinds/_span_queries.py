"""Questions about many character spans at once, each answered in log time: does a span
overlap any of a set, lie inside any of a set, and which is the first (by its place in the
list) of a set of regions that holds it.

device-guard asked them pairwise, every check call against every edit and every edit against
every kept region: quadratic, about 15 of a 16 MB module's 52 profiled seconds. The answers
here are the pairwise ones exactly, whatever the spans (overlapping, nested or not);
tests/test_bigfile_span_queries.py compares them on random spans.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

Span = tuple[int, int]


class SpanSet:
    """Spans (start, end) sorted by start, with the largest end among the first k of them:
    the spans that start before a point are a prefix, and one of them reaches past a point
    if and only if the prefix's largest end does."""

    def __init__(self, spans: Sequence[Span]) -> None:
        ordered = sorted(spans)
        self._starts = [start for start, _ in ordered]
        self._reach: list[int] = []  # _reach[k]: the largest end of ordered[:k + 1]
        reach = None
        for _, end in ordered:
            reach = end if reach is None or end > reach else reach
            self._reach.append(reach)

    def overlaps(self, start: int, end: int) -> bool:
        """Whether any span (a, b) has a < end and start < b."""
        k = bisect_left(self._starts, end)
        return k > 0 and self._reach[k - 1] > start

    def contains(self, start: int, end: int) -> bool:
        """Whether any span (a, b) has a <= start and end <= b."""
        k = bisect_right(self._starts, start)
        return k > 0 and self._reach[k - 1] >= end


def first_containing(regions: Sequence[Span], spans: Sequence[Span]) -> list[int | None]:
    """For each span (s, e), the smallest index i with regions[i] = (a, b), a <= s and e <= b;
    None where no region holds it.

    One sweep by start: regions enter as the sweep passes their start, and a tree over their
    ends ordered from the largest keeps the smallest index among the entered regions that
    end at or past each end, so one query gives those that reach past the span's end."""
    negated_ends = sorted({-end for _, end in regions})  # the largest end first
    rank = {-negated: i + 1 for i, negated in enumerate(negated_ends)}  # 1-based: the tree's positions
    tree: list[int | None] = [None] * (len(negated_ends) + 1)  # a Fenwick tree of minimums over prefixes

    def enter(position: int, index: int) -> None:
        while position < len(tree):
            held = tree[position]
            if held is None or index < held:
                tree[position] = index
            position += position & -position

    def smallest(count: int) -> int | None:  # the smallest index among ranks 1..count
        best = None
        while count > 0:
            held = tree[count]
            if held is not None and (best is None or held < best):
                best = held
            count -= count & -count
        return best

    by_start = sorted(range(len(regions)), key=lambda i: regions[i][0])
    out: list[int | None] = [None] * len(spans)
    entered = 0
    for j in sorted(range(len(spans)), key=lambda j: spans[j][0]):
        start, end = spans[j]
        while entered < len(by_start) and regions[by_start[entered]][0] <= start:
            i = by_start[entered]
            enter(rank[regions[i][1]], i)
            entered += 1
        # The regions that end at or past `end` hold the first ranks: as many as the ends >= end.
        out[j] = smallest(bisect_right(negated_ends, -end))
    return out
