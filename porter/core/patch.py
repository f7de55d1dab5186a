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
    """The git-style diff of one file, or b"" when equal. `path` may hold any character a
    file name can (quoted as git does); one that is not UTF-8 (surrogateescape) keeps its bytes."""
    if old == new:
        return b""
    a, b = _split_lf(old), _split_lf(new)
    name_a, name_b = quote_path(b"a/", path), quote_path(b"b/", path)
    # git ends a ---/+++ name that holds a space (and is not quoted) with a tab
    tail = b"\t" if b" " in name_a and not name_a.startswith(b'"') else b""
    out = [b"diff --git " + name_a + b" " + name_b + b"\n--- " + name_a + tail + b"\n+++ " + name_b + tail + b"\n"]
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


_C_ESCAPES = {0x07: b"\\a", 0x08: b"\\b", 0x09: b"\\t", 0x0A: b"\\n", 0x0B: b"\\v", 0x0C: b"\\f",
              0x0D: b"\\r", 0x22: b'\\"', 0x5C: b"\\\\"}


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


def _range(start: int, stop: int) -> str:
    length = stop - start
    if length == 0:
        return f"{start},0"
    return f"{start + 1}" if length == 1 else f"{start + 1},{length}"
