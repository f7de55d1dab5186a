"""The hunks report.html shows per file: parsed from changes.patch, or rebuilt from the edits.

A patch is bytes in each file's own encoding (a PEP 263 coding line is honoured); each
hunk is labelled with the rule codes of the edits on its lines.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_C_ESCAPE = re.compile(rb"\\([0-7]{3}|.)", re.DOTALL)
_C_CHARS = {b"a": b"\a", b"b": b"\b", b"t": b"\t", b"n": b"\n", b"v": b"\v", b"f": b"\f", b"r": b"\r"}


@dataclass(frozen=True)
class DiffLine:
    kind: str  # " ", "-" or "+"
    old: int | None
    new: int | None
    text: str
    rules: tuple[str, ...] = ()


@dataclass(frozen=True)
class Hunk:
    header: str
    rules: tuple[str, ...]
    lines: tuple[DiffLine, ...]


def _decode(hunks: list[tuple[str, int, int, list]]) -> list[tuple[str, int, int, list]]:
    # The patch keeps each file's own encoding: a coding cookie in its first two lines names
    # it (PEP 263); without one, or if the bytes disagree, UTF-8 with replacement characters.
    raw = [line for *_, lines in hunks for line in lines]
    encoding = "utf-8"
    for _, old, _, data in raw:
        if old is not None and old <= 2 and (m := _COOKIE.match(data)):
            encoding = m[1].decode("ascii")
    try:
        for *_, data in raw:
            data.decode(encoding)
    except (LookupError, UnicodeDecodeError):
        encoding = "utf-8"
    return [
        (header, start, n, [(k, o, nw, d.decode(encoding, errors="replace").rstrip("\r")) for k, o, nw, d in lines])
        for header, start, n, lines in hunks
    ]


def new_name(header: bytes) -> str | None:
    """The path of a `+++ ` line, as report.json spells it; None for /dev/null.

    git writes a name with a quote, a backslash, a control or a non-ASCII byte in double
    quotes with C escapes (porter/core/patch.py quote_path), and ends an unquoted name that
    holds a space with a tab. Bytes that are not UTF-8 read back with surrogateescape, as
    the scan read the name."""
    name = header[4:]
    if name.startswith(b'"'):
        body = name[1 : name.rindex(b'"')] if name.count(b'"') > 1 else name[1:]
        name = _C_ESCAPE.sub(
            lambda m: bytes([int(m[1], 8) & 0xFF]) if len(m[1]) == 3 else _C_CHARS.get(m[1], m[1]), body
        )
    else:
        name = name.rstrip(b"\t")
    if not name.startswith(b"b/"):
        return None
    return name[2:].decode("utf-8", errors="surrogateescape")


def parse_patch(patch: bytes) -> dict[str, list[tuple[str, int, int, list]]]:
    """Split a unified diff into {path: [(header, old_start, old_len, lines)]}.

    Hunk bodies are consumed by their line counts, so a source line that happens to start
    with "+++ " or "diff --git" is never mistaken for a file header.
    """
    out: dict[str, list] = {}
    lines = patch.split(b"\n")
    i, path = 0, None
    while i < len(lines):
        line, i = lines[i], i + 1
        if line.startswith(b"+++ "):
            path = new_name(line)
            if path is not None:
                out.setdefault(path, [])
        elif (m := _HUNK.match(line)) and path is not None:
            old, new = int(m[1]), int(m[3])
            old_left = int(m[2]) if m[2] is not None else 1
            new_left = int(m[4]) if m[4] is not None else 1
            header, old_len, raw = line.decode("ascii", errors="replace"), old_left, []
            while (old_left > 0 or new_left > 0) and i < len(lines):
                body, i = lines[i], i + 1
                kind = body[:1].decode("ascii", errors="replace")
                if kind == "\\":  # "\ No newline at end of file"
                    continue
                raw.append((kind, old if kind != "+" else None, new if kind != "-" else None, body[1:]))
                old, old_left = (old + 1, old_left - 1) if kind != "+" else (old, old_left)
                new, new_left = (new + 1, new_left - 1) if kind != "-" else (new, new_left)
            out[path].append((header, int(m[1]), old_len, raw))
    return {p: _decode(hunks) for p, hunks in out.items()}


def _distance(span: tuple[int, int], line: int) -> int:
    return 0 if span[0] <= line <= span[1] else min(abs(line - span[0]), abs(line - span[1]))


def _nearest(spans: list[tuple[int, int]], starts: list[int], line: int) -> int:
    """The hunk whose old range holds `line`, else the closest one (the earlier on a tie):
    every edit gets a hunk. A patch's hunks are in order and apart, so only the last hunk
    starting at or before the line and the one after it can be nearest: a search, not a
    scan of every hunk per edit (quadratic: 7 of a 1 MB notebook's 13 s)."""
    k = bisect_right(starts, line) - 1
    candidates = [c for c in (k, k + 1) if 0 <= c < len(spans)]
    return min(candidates, key=lambda c: (_distance(spans[c], line), c))


def hunks_from_patch(parsed: list[tuple[str, int, int, list]], edits: list[dict]) -> list[Hunk]:
    """Annotate each hunk, and each old line, with the rule codes of the edits on it."""
    spans = [(start, start + max(n, 1) - 1) for _, start, n, _ in parsed]
    starts = [start for start, _ in spans]
    codes: list[set[str]] = [set() for _ in parsed]
    for e in edits:
        if parsed:
            codes[_nearest(spans, starts, e["line"])].add(e["rule"])
    by_line: dict[int, set[str]] = {}
    for e in edits:
        by_line.setdefault(e["line"], set()).add(e["rule"])
    return [
        Hunk(
            header,
            tuple(sorted(codes[k])),
            tuple(
                DiffLine(kind, old, new, text, tuple(sorted(by_line.get(old, ()))) if kind != "+" else ())
                for kind, old, new, text in lines
            ),
        )
        for k, (header, _, _, lines) in enumerate(parsed)
    ]


def hunks_from_edits(edits: list[dict]) -> list[Hunk]:
    """A diff rebuilt from report.json alone: one hunk per edited line.

    Several edits on one line each record the whole line after their own change only, so
    each after-line is shown under its own rule rather than merged by guesswork.
    """
    grouped: dict[int, list[dict]] = {}
    for e in edits:
        grouped.setdefault(e["line"], []).append(e)
    hunks = []
    for line, group in sorted(grouped.items()):
        rules = tuple(sorted({e["rule"] for e in group}))
        body = [DiffLine("-", line, None, group[0]["before"], rules)]
        body += [
            DiffLine("+", None, None, text, (e["rule"],)) for e in group for text in e["after"].splitlines() or [""]
        ]
        hunks.append(Hunk(f"@@ line {line} @@", rules, tuple(body)))
    return hunks
