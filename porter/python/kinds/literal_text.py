"""Editing inside string literals without touching their quotes or prefixes."""

from __future__ import annotations

import re

# An optional string prefix (not bytes), then the opening quote.
_OPENING = re.compile(r"""^([rRuUfF]{0,2})('''|\"\"\"|'|")""")


def literal_body(source: str) -> tuple[int, int] | None:
    """Offsets (start, end) of the body of one simple literal's source text, else None.

    None for bytes, implicit concatenations ("a" "b") and anything not a single literal.
    """
    match = _OPENING.match(source)
    if not match or "b" in match.group(1).lower():
        return None
    quote = match.group(2)
    start = match.end()
    end = len(source) - len(quote)
    if end < start or not source.endswith(quote):
        return None
    body = source[start:end]
    # A second literal inside (implicit concatenation) would show its quote unescaped.
    if quote in body.replace("\\" + quote[0], ""):
        return None
    return start, end


def quote_like(source: str, value: str) -> str:
    """`value` as a literal using the quote style of `source` (for inserted keyword values)."""
    quote = "'" if source.lstrip("rRuUfF").startswith("'") else '"'
    return f"{quote}{value}{quote}"
