"""Suppression comments: `# porter: ignore[PRT901]` or `# porter: ignore[PRT901, PRT402]`.

A comment suppresses the listed codes on its own line, nothing else: there is no bare
`# porter: ignore`, so a suppression always says what it accepts. In Python files only
real comments count (found with `tokenize`, which runs only on files that contain the
marker); in other files (shell, YAML, requirements) a `#` comment on the line counts.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable

from porter.core.model import Finding

_NEWLINE = re.compile(r"\r\n|\r|\n")
_COMMENT = re.compile(r"#\s*porter:\s*ignore\[\s*(PRT\d{3}(?:\s*,\s*PRT\d{3})*)\s*,?\s*\]")


def suppressions(text: str, comments: str = "hash") -> dict[int, frozenset[str]]:
    """1-based line -> codes its suppression comment names (empty when the file has none).

    `comments`: "python" (comment tokens only), "hash" (a `#` comment on the line) or
    "none" (a file type without comments, such as JSON).
    """
    if comments == "none" or not _COMMENT.search(text):
        return {}
    found = _python_comments(text) if comments == "python" else None
    if found is None:
        # Lines as porter numbers them everywhere (\r\n, \r or \n; not str.splitlines,
        # which also breaks at form feeds and other separators).
        found = ((n, line) for n, line in enumerate(_NEWLINE.split(text), 1) if "#" in line)
    out: dict[int, frozenset[str]] = {}
    for line, comment in found:
        codes = {c.strip() for m in _COMMENT.finditer(comment) for c in m.group(1).split(",")}
        if codes:
            out[line] = out.get(line, frozenset()) | codes
    return out


def _python_comments(text: str) -> list[tuple[int, str]] | None:
    """(line, comment text) of every comment token; None when the file does not tokenize."""
    try:
        return [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(text).readline)
                if tok.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return None


def split_suppressed(findings: Iterable[Finding], by_line: dict[int, frozenset[str]]) -> tuple[list[Finding], int]:
    """The findings no comment suppresses, and how many were suppressed."""
    kept: list[Finding] = []
    dropped = 0
    for finding in findings:
        if finding.rule in by_line.get(finding.line, ()):
            dropped += 1
        else:
            kept.append(finding)
    return kept, dropped
