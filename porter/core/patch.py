"""changes.patch: a unified diff that `git apply` (or `patch -p1`) accepts on a clean SRC.

Diffs are made on bytes, line by line, so files keep their own encoding and line endings
in the patch; a last line without a newline gets git's "\\ No newline at end of file".
"""

from __future__ import annotations

import difflib

_NO_NEWLINE = b"\n\\ No newline at end of file\n"


def _split_lf(data: bytes) -> list[bytes]:
    # Split on \n only: a CRLF line keeps its \r\n, a lone \r stays inside its line.
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _emit(prefix: bytes, line: bytes) -> bytes:
    return prefix + line if line.endswith(b"\n") else prefix + line + _NO_NEWLINE


def file_diff(path: str, old: bytes, new: bytes, context: int = 3) -> bytes:
    """The git-style diff of one file, or b"" when equal."""
    if old == new:
        return b""
    a, b = _split_lf(old), _split_lf(new)
    out = [f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n".encode()]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@\n".encode())
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                out.extend(_emit(b" ", line) for line in a[a1:a2])
                continue
            out.extend(_emit(b"-", line) for line in a[a1:a2])
            out.extend(_emit(b"+", line) for line in b[b1:b2])
    return b"".join(out)


def _range(start: int, stop: int) -> str:
    length = stop - start
    if length == 0:
        return f"{start},0"
    return f"{start + 1}" if length == 1 else f"{start + 1},{length}"
