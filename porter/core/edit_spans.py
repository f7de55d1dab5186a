"""Where porter's edits lie in lines, and the diff they make: changes.patch from the edits.

porter knows the exact span of every edit it applies, so the patch need not rediscover the
changes with a sequence matcher over the whole file (quadratic on long runs of equal lines:
16 s for a 150 KB file of 15,000 identical lines). Each applied edit becomes a line span:
the lines of the original text it touches and the lines of the new text they became.
Overlapping and touching spans merge into regions; the lines between regions are equal by
construction, and checked to be (a span that does not fit the bytes, e.g. an encoding whose
newline is not the byte 0x0A, gives no opcodes and the caller falls back to a matcher).
Only each region's own lines, a few, are aligned with difflib, as the matcher would have
aligned them.

Lines are "\\n"-separated, as in the patch: a CRLF line keeps its "\\r", a lone "\\r" stays
inside its line.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

# (first, stop) of the original text's lines and (first, stop) of the new text's, 0-based,
# stop exclusive.
LineSpan = tuple[int, int, int, int]
Opcode = tuple[str, int, int, int, int]


def edit_line_spans(text: str, edits: Iterable[tuple[int, int, str]]) -> list[LineSpan]:
    """The line span of each edit (start, end, replacement) of `text`, given sorted and not
    overlapping, as they are applied: one pass over the text, whatever the number of edits."""
    spans: list[LineSpan] = []
    pos = line = added = 0  # line: "\n"s of text before pos; added: lines the edits so far added
    for start, end, replacement in edits:
        line += text.count("\n", pos, start)
        pos = start
        inner = text.count("\n", start, end)
        # The edit's first and last line, whole; the new text has as many lines there, plus
        # the newlines the replacement brings, less those it takes away.
        stop = line + inner + 1
        grows = replacement.count("\n") - inner
        spans.append((line, stop, line + added, stop + added + grows))
        added += grows
    return spans


class ByteLines:
    """A file's bytes as "\\n"-terminated lines (the last may have none), without copying
    each line a second time to put its newline back: whole lines are made only for the few
    a patch shows."""

    def __init__(self, data: bytes) -> None:
        parts = data.split(b"\n")
        self.ends_with_newline = parts[-1] == b""
        if self.ends_with_newline:
            parts.pop()
        self.parts = parts

    def __len__(self) -> int:
        return len(self.parts)

    def line(self, i: int) -> bytes:
        if i == len(self.parts) - 1 and not self.ends_with_newline:
            return self.parts[i]
        return self.parts[i] + b"\n"

    def lines(self, start: int, stop: int) -> list[bytes]:
        return [self.line(i) for i in range(start, stop)]

    def same(self, i: int, other: ByteLines, j: int, n: int) -> bool:
        """Whether n lines from line i equal n lines of `other` from line j, newlines included
        (only a file's last line can lack one)."""
        if n == 0:
            return True
        if self.parts[i : i + n] != other.parts[j : j + n]:
            return False
        return self.line(i + n - 1) == other.line(j + n - 1)


def _regions(spans: Iterable[LineSpan], old_len: int, new_len: int) -> list[list[int]]:
    """Spans merged where they overlap or touch (two edits on one line are one change), cut
    at the end of each text (an edit at the very end touches the empty line after the last)."""
    regions: list[list[int]] = []
    for a1, a2, b1, b2 in sorted(spans):
        if regions and a1 <= regions[-1][1]:
            last = regions[-1]
            last[1], last[3] = max(last[1], a2), max(last[3], b2)
        else:
            regions.append([a1, a2, b1, b2])
    for region in regions:
        region[1], region[3] = min(region[1], old_len), min(region[3], new_len)
    return regions


def _aligned(a: ByteLines, b: ByteLines, a1: int, a2: int, b1: int, b2: int) -> list[Opcode]:
    """The opcodes of one region: a changed line is a replace without asking difflib (most
    edits stay within their line); more lines are aligned by difflib, on these lines only."""
    if a2 - a1 == 1 and b2 - b1 == 1:
        return [("equal" if a.line(a1) == b.line(b1) else "replace", a1, a2, b1, b2)]
    matcher = difflib.SequenceMatcher(None, a.lines(a1, a2), b.lines(b1, b2), autojunk=False)
    return [(tag, x1 + a1, x2 + a1, y1 + b1, y2 + b1) for tag, x1, x2, y1, y2 in matcher.get_opcodes()]


def span_opcodes(a: ByteLines, b: ByteLines, spans: Sequence[LineSpan]) -> list[Opcode] | None:
    """difflib-style opcodes from old lines `a` to new lines `b`, given the line span of every
    edit that made `b`; None when the spans do not account for every difference."""
    ops: list[Opcode] = []
    i = j = 0
    for a1, a2, b1, b2 in _regions(spans, len(a), len(b)) + [[len(a), len(a), len(b), len(b)]]:
        if a1 - i != b1 - j or a1 < i or a2 < a1 or b2 < b1 or not a.same(i, b, j, a1 - i):
            return None
        ops.append(("equal", i, a1, j, b1))
        ops.extend(_aligned(a, b, a1, a2, b1, b2) if a2 > a1 or b2 > b1 else ())
        i, j = a2, b2
    merged: list[Opcode] = []
    for op in ops:  # empty runs dropped, adjacent equal runs joined, as difflib's opcodes are
        if op[1] == op[2] and op[3] == op[4]:
            continue
        if merged and op[0] == "equal" == merged[-1][0]:
            merged[-1] = ("equal", merged[-1][1], op[2], merged[-1][3], op[4])
        else:
            merged.append(op)
    return merged
