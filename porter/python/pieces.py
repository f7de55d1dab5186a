"""A very large module parsed, and its edited text checked, in pieces cut between top-level
statements, with exactly the answers of one parse of the whole.

CPython's parser holds every token and its own syntax tree of the whole text until it is
done: about 90 bytes per byte of code (a 50 MB module: 4.5 GB for `symtable` alone, more for
`ast.parse`, which then builds the Python tree beside it), and the compiler's time grows
faster than the text (16 MB: 15.7 s against 2.3 s for 4 MB). In pieces of about a
megabyte, only one piece's tokens and C tree live at a time, and each costs what a small
module costs.

Where to cut: before a line that starts at column 0 with a name or a decorator (not `else`,
`elif`, `except` or `finally`), after a line that does not end in a backslash. Such a line
may still lie inside a string or brackets; then the piece before it does not parse alone,
and it is joined to the next. A piece that parses alone ends its tokens clean (no open
string, bracket or continuation), and the next starts a statement at column 0, which no
statement of the piece before can take as its own (only `else`/`elif`/`except`/`finally`
and indented `case` continue one, and those do not parse alone): so when every piece
parses, the whole does, to their statements one after another. Each piece is parsed
after as many blank lines as come before it, so positions are the whole text's. Whatever
does not fit this (a piece that will not parse however far it is joined, a module using
`from __future__ import barry_as_FLUFL`, which can change what `!=` means to the parser) goes to
the one parse of the whole, which also gives the error message and line a broken file gets.
"""

from __future__ import annotations

import ast
import re
import symtable
from collections.abc import Callable
from typing import TypeVar

from porter.core.forked import forked_map, task_processes

PIECE_CHARS = 1 << 20  # about a megabyte of code per piece; a module up to twice that is parsed whole

# A line starting at column 0 with what may start a statement (a name, a keyword, a decorator),
# not a clause that continues one.
_STATEMENT_LINE = re.compile(r"\n(?=[A-Za-z_@])(?!(?:else|elif|except|finally)\b)")
_GIVE_UP = 8  # a piece that grows past 8 pieces' size without parsing: parse the whole
R = TypeVar("R")


def cuts(text: str, size: int = PIECE_CHARS) -> list[int]:
    """Offsets at least `size` apart where a line that may start a top-level statement begins."""
    out: list[int] = []
    pos = size
    while pos < len(text):
        found = _STATEMENT_LINE.search(text, pos)
        if found is None:
            break
        cut = found.end()
        if text.endswith("\\", 0, found.start()) or text.endswith("\\\r", 0, found.start()):
            pos = cut  # the line before continues onto this one
            continue
        out.append(cut)
        pos = cut + size
    return out


def split(text: str, size: int, takes: Callable[[str, int], bool]) -> bool:
    """Whether `text`, cut at `cuts`, is taken whole by `takes(piece, lines before it)`, a
    failing piece being joined to the next until it is taken. False when the pieces cannot
    tell (one never taken, or too large): then only the whole text can."""
    return checked(text, size, lambda piece, lines_before: True if takes(piece, lines_before) else None) is not None


def checked(
    text: str, size: int, check: Callable[[str, int], R | None], processes: int = 1
) -> list[tuple[int, int, int, R]] | None:
    """(start, end, lines before, `check(piece, lines before it)`) of each piece of `text` cut
    at `cuts`, a piece `check` refuses (None) being joined to the next until it is taken; None
    when the pieces cannot tell (one never taken, or too large): then only the whole text can.

    In one process the pieces are checked in order, one after another (`check` may keep what
    it saw). With more (porter/core/forked.py), every piece is checked alone side by side
    first, and only what joins a refused one is checked again here."""
    if "barry_as_FLUFL" in text:
        return None
    bounds: list[tuple[int, int, int]] = []  # (start, end, lines before) of each piece alone
    start, lines_before = 0, 0
    for end in [*cuts(text, size), len(text)]:
        bounds.append((start, end, lines_before))
        lines_before += _line_breaks(text[start:end])
        start = end
    alone = forked_map(lambda b: check(text[b[0] : b[1]], b[2]), bounds, processes) if processes > 1 else None
    out: list[tuple[int, int, int, R]] = []
    i = 0
    while i < len(bounds):
        start, end, lines_before = bounds[i]
        result = alone[i] if alone is not None else check(text[start:end], lines_before)
        while result is None:  # cut inside a string or brackets, or before a clause: join the next piece
            if i + 1 == len(bounds) or end - start > _GIVE_UP * size:
                return None
            i += 1
            end = bounds[i][1]
            result = check(text[start:end], lines_before)
        out.append((start, end, lines_before, result))
        i += 1
    return out


def _line_breaks(text: str) -> int:
    """Lines the parser counts in `text`: it reads "\\r\\n", a lone "\\r" and "\\n" each as one."""
    if "\r" not in text:
        return text.count("\n")
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def parse(text: str, path: str, parse_whole: Callable[[str, str], ast.Module]) -> ast.Module:
    """`parse_whole(text, path)`'s tree, made piece by piece when `text` is longer than
    two pieces (each piece by `parse_whole`, after its blank lines)."""
    size = PIECE_CHARS
    if len(text) <= 2 * size:
        return parse_whole(text, path)
    body: list[ast.stmt] = []

    def takes(piece: str, lines_before: int) -> bool:
        try:
            body.extend(parse_whole("\n" * lines_before + piece, path).body)
        except Exception:  # SyntaxError, null bytes, too deep: the whole parse decides
            return False
        return True

    if not split(text, size, takes):
        return parse_whole(text, path)
    return ast.Module(body=body, type_ignores=[])


def parses_in_pieces(text: str, path: str) -> bool:
    """True if every piece of `text` parses (so the whole does); False when they do not tell
    (the text is small, or a piece does not parse however far it is joined). Where the run
    leaves this file more than one process (porter/core/forked.py), the pieces are checked
    side by side first.

    Each piece goes through `symtable`: CPython's parser and its scopes, without the Python
    tree `ast.parse` builds or the code the compiler makes (4 MB: 1.3 s against 2.3 s)."""
    size = PIECE_CHARS
    if len(text) <= 2 * size:
        return False

    def takes(piece: str, lines_before: int) -> bool:
        try:
            symtable.symtable(piece, path, "exec")
        except Exception:  # also what only the scopes refuse (nonlocal at module level): the whole decides
            return False
        return True

    return (
        checked(text, size, lambda piece, lines_before: takes(piece, lines_before) or None, task_processes())
        is not None
    )
