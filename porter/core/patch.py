"""changes.patch: a unified diff that `git apply` (or `patch -p1`) accepts on a clean SRC.

Diffs are made on bytes, line by line, so files keep their own encoding and line endings
in the patch; a last line without a newline gets git's "\\ No newline at end of file".
A converted file's hunks come from the line spans of porter's own edits
(porter/core/edit_spans.py); a matcher over the whole file is the fallback, for a diff
without them.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from porter.core.edit_spans import ByteLines, LineSpan, Opcode, span_opcodes

_NO_NEWLINE = b"\n\\ No newline at end of file\n"


def _emit(prefix: bytes, line: bytes) -> bytes:
    return prefix + line if line.endswith(b"\n") else prefix + line + _NO_NEWLINE


def file_diff(path: str, old: bytes, new: bytes, context: int = 3, spans: Sequence[LineSpan] | None = None) -> bytes:
    """The git-style diff of one file, or b"" when equal. `path` may hold any character a
    file name can (quoted as git does); one that is not UTF-8 (surrogateescape) keeps its bytes.
    `spans`: the line span of every edit that made `new` from `old` (edit_line_spans)."""
    if old == new:
        return b""
    a, b = ByteLines(old), ByteLines(new)
    name_a, name_b = quote_path(b"a/", path), quote_path(b"b/", path)
    # git ends a ---/+++ name that holds a space (and is not quoted) with a tab
    tail = b"\t" if b" " in name_a and not name_a.startswith(b'"') else b""
    out = [b"diff --git " + name_a + b" " + name_b + b"\n--- " + name_a + tail + b"\n+++ " + name_b + tail + b"\n"]
    opcodes = span_opcodes(a, b, spans) if spans is not None else None
    if opcodes is None:
        opcodes = _AnchoredMatcher(None, a.lines(0, len(a)), b.lines(0, len(b)), autojunk=False).get_opcodes()
    for group in _Grouped(opcodes).get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@\n".encode())
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                out.extend(_emit(b" ", line) for line in a.lines(a1, a2))
                continue
            out.extend(_emit(b"-", line) for line in a.lines(a1, a2))
            out.extend(_emit(b"+", line) for line in b.lines(b1, b2))
    return b"".join(out)


class _Grouped(difflib.SequenceMatcher):
    """difflib's own grouping into hunks (context lines, where a gap splits two hunks), over
    opcodes made elsewhere: the hunks are cut as they always were, whoever found the changes."""

    def __init__(self, opcodes: list[Opcode]) -> None:  # no sequences: only get_opcodes is asked
        self._opcodes = opcodes

    def get_opcodes(self):
        return list(self._opcodes)


_C_ESCAPES = {
    0x07: b"\\a",
    0x08: b"\\b",
    0x09: b"\\t",
    0x0A: b"\\n",
    0x0B: b"\\v",
    0x0C: b"\\f",
    0x0D: b"\\r",
    0x22: b'\\"',
    0x5C: b"\\\\",
}


def quote_path(prefix: bytes, path: str) -> bytes:
    """`prefix + path` as git writes a name in a patch: as it is, or, when it holds a quote,
    a backslash, a control character or a byte >= 0x80 (a file name read with
    surrogateescape keeps its own bytes), in double quotes with C escapes (octal for the
    rest), as git's quote_c_style; `git apply` reads both."""
    raw = prefix + path.encode("utf-8", "surrogateescape")
    if not any(c < 0x20 or c >= 0x7F or c in (0x22, 0x5C) for c in raw):
        return raw
    out = bytearray(b'"')
    for c in raw:
        if c in _C_ESCAPES:
            out += _C_ESCAPES[c]
        elif c < 0x20 or c >= 0x7F:
            out += b"\\%03o" % c
        else:
            out.append(c)
    out += b'"'
    return bytes(out)


class _AnchoredMatcher(difflib.SequenceMatcher):
    """SequenceMatcher whose opcodes are found between anchors: lines that occur once in each
    text, in the same order (the longest such run, as patience diff). Between two anchors the
    exact matcher runs on a few lines. difflib alone (autojunk off, for minimal hunks) is
    quadratic on a long file of repeated lines: 40 s for a 100 KB file with 1,800 edits. Still
    quadratic where no line is unique (15,000 equal lines): the fallback for a diff without
    edit spans (porter/core/edit_spans.py)."""

    def get_opcodes(self):
        a, b = self.a, self.b
        anchors = _anchors(a, b)
        ops: list[tuple[str, int, int, int, int]] = []
        i0 = j0 = 0
        for i1, j1 in anchors + [(len(a), len(b))]:
            if i1 > i0 or j1 > j0:
                sub = difflib.SequenceMatcher(None, a[i0:i1], b[j0:j1], autojunk=False)
                ops.extend((tag, x1 + i0, x2 + i0, y1 + j0, y2 + j0) for tag, x1, x2, y1, y2 in sub.get_opcodes())
            if i1 < len(a):
                ops.append(("equal", i1, i1 + 1, j1, j1 + 1))
            i0, j0 = i1 + 1, j1 + 1
        merged: list[tuple[str, int, int, int, int]] = []
        for op in ops:  # adjacent equal runs become one
            if merged and op[0] == "equal" == merged[-1][0]:
                tag, x1, _, y1, _ = merged[-1]
                merged[-1] = (tag, x1, op[2], y1, op[4])
            else:
                merged.append(op)
        return merged or [("equal", 0, 0, 0, 0)]


def _anchors(a: list[bytes], b: list[bytes]) -> list[tuple[int, int]]:
    """(i, j) of lines unique in both texts and equal, the longest increasing run of them."""
    count_a: dict[bytes, int] = {}
    for line in a:
        count_a[line] = count_a.get(line, 0) + 1
    where_b: dict[bytes, int] = {}
    count_b: dict[bytes, int] = {}
    for j, line in enumerate(b):
        count_b[line] = count_b.get(line, 0) + 1
        where_b[line] = j
    pairs = [(i, where_b[line]) for i, line in enumerate(a) if count_a[line] == 1 and count_b.get(line) == 1]
    # longest increasing subsequence of the j's (patience sorting), O(n log n)
    import bisect

    tails: list[int] = []
    tail_at: list[int] = []
    back: list[int] = []
    for k, (_, j) in enumerate(pairs):
        pos = bisect.bisect_left(tails, j)
        if pos == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[pos] = j
            tail_at[pos] = k
        back.append(tail_at[pos - 1] if pos else -1)
    run: list[tuple[int, int]] = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        run.append(pairs[k])
        k = back[k]
    return run[::-1]


def _range(start: int, stop: int) -> str:
    length = stop - start
    if length == 0:
        return f"{start},0"
    return f"{start + 1}" if length == 1 else f"{start + 1},{length}"
