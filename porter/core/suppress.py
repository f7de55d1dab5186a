"""Suppression comments: `# porter: ignore[PRT901]` or `# porter: ignore[PRT901, PRT402]`.

A comment suppresses the listed codes on its own line, nothing else: there is no bare
`# porter: ignore`, so a suppression always says what it accepts. In Python files only
real comments count (found with `tokenize`, which runs only on files that contain the
marker); in other files (shell, YAML, requirements) a `#` comment on the line counts.

`problems` says what is wrong with the comments of a file, as ruff's RUF100 does: a bare
or malformed `# porter: ignore` and a code no rule has (each suppresses nothing), and a
code that suppressed nothing on its line (unused).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from functools import lru_cache

from porter.core.model import Finding

_NEWLINE = re.compile(r"\r\n|\r|\n")
_COMMENT = re.compile(r"#\s*porter:\s*ignore\[\s*(PRT\d{3}(?:\s*,\s*PRT\d{3})*)\s*,?\s*\]")
# Any suppression-like marker, well formed or not (`# porter: ignore`, `# porter:ignore[x]`).
_MARKER = re.compile(r"#\s*porter\s*:\s*ignore\b(?P<bracket>\[(?P<body>[^\]\n]*)\]?)?", re.IGNORECASE)
_CODE = re.compile(r"PRT\d{3}")


def suppressions(text: str, comments: str = "hash") -> dict[int, frozenset[str]]:
    """1-based line -> codes its suppression comment names (empty when the file has none).

    `comments`: "python" (comment tokens only), "hash" (a `#` comment on the line) or
    "none" (a file type without comments, such as JSON).
    """
    if comments == "none" or not _COMMENT.search(text):
        return {}
    found = _comments(text, comments)
    out: dict[int, frozenset[str]] = {}
    for line, comment in found:
        codes = {c.strip() for m in _COMMENT.finditer(comment) for c in m.group(1).split(",")}
        if codes:
            out[line] = out.get(line, frozenset()) | codes
    return out


@lru_cache(maxsize=8)
def _comments(text: str, comments: str) -> tuple[tuple[int, str], ...]:
    """(line, comment) of a file; kept for the few texts in use, since the suppressions, the
    Python pipeline's early drop and the comment check all ask for the same file's."""
    found = _python_comments(text) if comments == "python" else None
    if found is None:
        # Lines as porter numbers them everywhere (\r\n, \r or \n; not str.splitlines,
        # which also breaks at form feeds and other separators).
        found = [(n, line) for n, line in enumerate(_NEWLINE.split(text), 1) if "#" in line]
    return tuple(found)


@dataclass(frozen=True)
class Problem:
    """Something wrong with a suppression comment: `kind` "invalid" or "unused"."""

    kind: str
    line: int
    col: int  # 1-based, of the comment's `#`
    message: str


def has_markers(text: str) -> bool:
    """Whether the text holds anything like a `# porter: ignore` comment."""
    return _MARKER.search(text) is not None


def problems(
    text: str, comments: str, known: Collection[str], active: Collection[str], used: Collection[tuple[int, str]]
) -> list[Problem]:
    """What is wrong with the suppression comments of a file.

    `known`: every rule code there is; `active`: the codes this run applies; `used`: the
    (line, code) pairs a comment suppressed a finding for. A code of an inactive rule is
    not reported as unused (the run could not know).
    """
    if comments == "none" or not has_markers(text):
        return []
    out: list[Problem] = []
    for line, comment in _comments(text, comments):
        for m in _MARKER.finditer(comment):
            col = _column(text, line, comment, m.start())
            if not m.group("bracket"):
                out.append(
                    Problem(
                        "invalid",
                        line,
                        col,
                        "bare `# porter: ignore` suppresses nothing: name the codes, as in `# porter: ignore[PRT901]`",
                    )
                )
                continue
            body = m.group("body") or ""
            parts = [p.strip() for p in body.split(",") if p.strip()]
            if not m.group("bracket").endswith("]") or not parts:
                out.append(
                    Problem(
                        "invalid",
                        line,
                        col,
                        f"`{m.group(0)}` suppresses nothing: name the codes, as in `# porter: ignore[PRT901]`",
                    )
                )
                continue
            for code in parts:
                if not _CODE.fullmatch(code):
                    out.append(
                        Problem(
                            "invalid",
                            line,
                            col,
                            f"`# porter: ignore[...]`: {code!r} is not a rule code "
                            "(PRT and 3 digits); the comment suppresses nothing"
                            f"{_hint(code, known)}",
                        )
                    )
                elif code not in known:
                    out.append(
                        Problem(
                            "invalid",
                            line,
                            col,
                            f"`# porter: ignore[...]`: no rule has the code {code} "
                            f"(see `porter rules`){_hint(code, known)}",
                        )
                    )
                elif code in active and (line, code) not in used:
                    out.append(Problem("unused", line, col, f"unused suppression: no {code} finding on this line"))
    return out


def _hint(code: str, known: Collection[str]) -> str:
    """'; did you mean PRT201?' for a mistyped code (difflib loaded only then)."""
    from porter.core.suggest import closest_codes, did_you_mean

    hint = did_you_mean(closest_codes(code, known))
    return f"; {hint}" if hint else ""


def _column(text: str, line: int, comment: str, offset: int) -> int:
    """1-based column of the marker in its line (the comment is the line, or a token of it)."""
    lines = _NEWLINE.split(text)
    whole = lines[line - 1] if 0 < line <= len(lines) else comment
    at = whole.find(comment)
    return (at if at >= 0 else 0) + offset + 1


def _python_comments(text: str) -> list[tuple[int, str]] | None:
    """(line, comment text) of every comment token; None when the file does not tokenize."""
    try:
        return [
            (tok.start[0], tok.string)
            for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError):
        return None


def split_suppressed(
    findings: Iterable[Finding], by_line: dict[int, frozenset[str]], used: set[tuple[int, str]] | None = None
) -> tuple[list[Finding], int]:
    """The findings no comment suppresses, and how many were suppressed (their (line, code)
    pairs are added to `used`, when given)."""
    kept: list[Finding] = []
    dropped = 0
    for finding in findings:
        if finding.rule in by_line.get(finding.line, ()):
            dropped += 1
            if used is not None:
                used.add((finding.line, finding.rule))
        else:
            kept.append(finding)
    return kept, dropped
