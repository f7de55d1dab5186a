"""What the text-file pipelines share: decoding, findings at spans, the loop over a file type's
table of matchers, and handing the findings over.

These files are text in UTF-8 (a BOM is kept); anything else, or bytes with NULs, is not
a file porter can edit safely, so it is reported as skipped and copied unchanged. A
pipeline returns a `Found` (porter/core/edits.py), which the engine applies or reports.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

from porter.core.edits import Comments, Found
from porter.core.model import Finding, Severity, Skipped
from porter.python.context import span_finding
from porter.rules import ActiveRules, Rule
from porter.rules.kinds import Matcher
from porter.core.textio import LineIndex

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

    def found(self, findings: list[Finding], verify=None, comments: Comments = "hash") -> Found:
        """Hand the findings (with their edits) of this file to the engine."""
        return Found(self.text, findings, self.encode, comments, verify, self.index)

    def finding(
        self,
        rule: Rule,
        span: tuple[int, int],
        message: str | None = None,
        *,
        replacement: str | None = None,
        suggestion: str | None = None,
        subject: str | None = None,
        severity: Severity | None = None,
    ) -> Finding:
        """A finding of `rule` at a character span; with an edit of that span when `replacement` is set."""
        return span_finding(
            rule,
            self.path,
            self.index,
            span,
            message,
            replacement=replacement,
            suggestion=suggestion,
            subject=subject,
            severity=severity,
        )


View = TypeVar("View")


def matched(table: Iterable[Matcher[View]], view: View, rules: ActiveRules) -> list[Finding]:
    """The findings of a file type's table of matchers (its `<TYPE>_KINDS`) over its view: each
    matcher with active rules adds its own, in the table's order, which is the order the file
    type lists its findings in. A kind without active rules is not called."""
    findings: list[Finding] = []
    for matcher in table:
        kind_rules = rules.of_kind(matcher.kind)
        if kind_rules:
            findings += matcher.find(view, kind_rules)
    return findings


def decode_text(path: str, data: bytes, what: str) -> TextFile | str:
    """The decoded file, or the reason (a sentence) why it is not text porter can edit."""
    if b"\0" in data:
        return f"binary content in a file named like {what}; copied unchanged"
    bom = data.startswith(_BOM)
    try:
        text = data[len(_BOM) :].decode("utf-8") if bom else data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text (byte {exc.start}: {exc.reason}); copied unchanged"
    return TextFile(path, text, LineIndex(text), bom)


def open_text(path: str, data: bytes, what: str, screen: re.Pattern[bytes] | None = None) -> TextFile | Skipped | None:
    """The decoded file; `Skipped` when it is not text porter can edit; None when `screen`
    is given and finds none of its words in the bytes (before decoding: data files named
    like configs are large, and most hold none)."""
    if screen is not None and b"\0" not in data and not screen.search(data):
        return None
    file = decode_text(path, data, what)
    if isinstance(file, str):
        return Skipped(file)
    return file


def open_yaml(
    path: str, data: bytes, what: str, screen: re.Pattern[bytes] | None = None
) -> tuple[TextFile, list] | Skipped | None:
    """`open_text`, then the file's YAML documents: (file, documents), or `Skipped` (also for
    YAML that does not parse: the file is copied as it is), or None (screened out)."""
    file = open_text(path, data, what, screen)
    if not isinstance(file, TextFile):
        return file
    from porter.filetypes._yamltree import AliasBomb, YamlError, parse_yaml  # the YAML library loads only when needed

    try:
        return file, parse_yaml(file.text)
    except AliasBomb as exc:  # valid YAML, but no tool should expand it: said, not walked
        return Skipped(f"{exc}; copied unchanged, not converted")
    except YamlError as exc:
        return Skipped(f"invalid YAML: {exc}; copied unchanged")
