"""Text from outside porter (file names, a repository's code and rules) made safe to print.

A file may be named `\\x1b[31m...` or `\\x1b]0;title\\x07`: printed as it is, such a name
recolours or retitles the user's terminal, or hides what follows it. Text output shows
such characters as escapes instead, and bytes that are not UTF-8 (file names decoded with
surrogateescape) as `\\xNN`, never as an encoding error. JSON and SARIF escape them
themselves.
"""

from __future__ import annotations

import re

# C0 and C1 control characters and DEL; lone surrogates (undecodable bytes of a file name);
# the bidirectional overrides and isolates that reorder what a terminal shows ("Trojan Source").
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, as surrogateescape keeps it
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str, lines: bool = False) -> str:
    """`text` with every control character, undecodable byte and direction override escaped
    (with `lines`, line breaks kept: text of several lines)."""
    if lines:
        return "\n".join(_UNPRINTABLE.sub(_escape, line) for line in text.split("\n"))
    return _UNPRINTABLE.sub(_escape, text)
