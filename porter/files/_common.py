"""What the shell, config and notebook pipelines share: decoding, findings at spans, results.

These files are text in UTF-8 (a BOM is kept); anything else, or bytes with NULs, is not
a file porter can edit safely, so it is reported as skipped and copied unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from porter.edits import apply_edits, edit_records, select_edits
from porter.model import Edit, FileResult, Finding
from porter.pycontext import span_finding
from porter.rules import Rule
from porter.textio import LineIndex
from porter.wordregex import word_alternation

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class TextFile:
    """A decoded file: its text, a line index over it, and whether it had a BOM."""

    path: str
    text: str
    index: LineIndex
    bom: bool

    def encode(self, text: str) -> bytes:
        data = text.encode("utf-8")
        return _BOM + data if self.bom else data

    def finding(self, rule: Rule, span: tuple[int, int], message: str | None = None, *,
                replacement: str | None = None, suggestion: str | None = None,
                subject: str | None = None, severity: str | None = None) -> Finding:
        """A finding of `rule` at a character span; with an edit of that span when `replacement` is set."""
        return span_finding(rule, self.path, self.index, span, message, replacement=replacement,
                            suggestion=suggestion, subject=subject, severity=severity)


def decode_text(path: str, data: bytes, what: str) -> TextFile | str:
    """The decoded file, or the reason (a sentence) why it is not text porter can edit."""
    if b"\0" in data:
        return f"binary content in a file named like {what}; copied unchanged"
    bom = data.startswith(_BOM)
    try:
        text = data[len(_BOM):].decode("utf-8") if bom else data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text (byte {exc.start}: {exc.reason}); copied unchanged"
    return TextFile(path, text, LineIndex(text), bom)


def build_result(file: TextFile, findings: list[Finding], kind: str, extra: list[Edit] = ()) -> FileResult:
    """Apply the findings' edits (plus `extra` edits that have no finding of their own)."""
    edits, dropped = select_edits([f.edit for f in findings if f.edit] + list(extra))
    kept = tuple(f for f in findings if f.edit is None)
    if not edits:
        return FileResult(file.path, "unchanged", kind=kind, findings=kept)
    new_text = apply_edits(file.text, edits)
    return FileResult(
        file.path,
        "changed",
        kind=kind,
        edits=tuple(edit_records(file.text, file.index, edits)),
        findings=kept,
        new_bytes=file.encode(new_text),
        reason=f"{len(dropped)} overlapping edit(s) dropped" if dropped else None,
    )


def skipped(path: str, kind: str, reason: str) -> FileResult:
    return FileResult(path, "skipped", kind=kind, reason=reason)


def open_text(path: str, data: bytes, kind: str, what: str, screen: re.Pattern[bytes] | None = None) -> TextFile | FileResult:
    """The decoded file, or the result to return at once: `skipped` when it is not text
    porter can edit, `unchanged` when `screen` is given and finds none of its words in the
    bytes (before decoding: data files named like configs are large, and most hold none)."""
    if screen is not None and b"\0" not in data and not screen.search(data):
        return FileResult(path, "unchanged", kind=kind)
    file = decode_text(path, data, what)
    if isinstance(file, str):
        return skipped(path, kind, file)
    return file


def words_screen(words: set[str], before: str = "") -> re.Pattern[bytes]:
    """A bytes screen for any of `words` (each may go on: `bf16` finds `bf16_full_eval`),
    each after `before`; with no words, one that never matches (no rule is active)."""
    if not words:
        return re.compile(rb"(?!)")
    return re.compile((re.escape(before) + word_alternation([], prefixes=words)).encode())
