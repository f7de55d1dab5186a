"""Applying span edits to text: the one find-and-fix path every file type goes through.

Edits are character spans of the original text. They are applied in order; an edit that
overlaps one already taken is dropped (and returned, so callers can report it), which keeps
application deterministic whatever order the rules fired in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from porter.core.edit_spans import edit_line_spans
from porter.core.model import Edit, EditRecord, Finding
from porter.core.suppress import split_suppressed, suppressions
from porter.core.textio import LineIndex


def select_edits(edits: list[Edit]) -> tuple[list[Edit], list[Edit]]:
    """Sort edits and split them into (applied, dropped because they overlap an earlier one)."""
    taken: list[Edit] = []
    dropped: list[Edit] = []
    last_end = -1
    seen: set[tuple[int, int, str]] = set()
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        key = (edit.start, edit.end, edit.replacement)
        if key in seen:
            continue  # two rules agreeing on the same change
        if edit.start < last_end:
            dropped.append(edit)
            continue
        seen.add(key)
        taken.append(edit)
        last_end = max(last_end, edit.end)
    return taken, dropped


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping, sorted edits."""
    out: list[str] = []
    pos = 0
    for edit in edits:
        out.append(text[pos : edit.start])
        out.append(edit.replacement)
        pos = edit.end
    out.append(text[pos:])
    return "".join(out)


def edit_records(text: str, index: LineIndex, edits: list[Edit], applied: list[Edit] | None = None) -> list[EditRecord]:
    """For each edit, the whole original line(s) it touches and how they read after it, with
    its line span among the `applied` edits (an edit agreeing with one applied has its span)."""
    keys = [(e.start, e.end, e.replacement) for e in applied or ()]
    span_of = dict(zip(keys, edit_line_spans(text, keys)))
    records: list[EditRecord] = []
    for edit in edits:
        first, _ = index.line_col(edit.start)
        last, _ = index.line_col(max(edit.start, edit.end - 1) if edit.end > edit.start else edit.start)
        start = index.starts[first - 1]
        end = index.starts[last] if last < len(index.starts) else len(text)
        before = text[start:end]
        after = before[: edit.start - start] + edit.replacement + before[edit.end - start :]
        span = span_of.get((edit.start, edit.end, edit.replacement))
        records.append(EditRecord(edit.rule, first, before.rstrip("\r\n"), after.rstrip("\r\n"), span))
    return records


def agreeing_duplicates(edits: list[Edit], taken: list[Edit]) -> list[Edit]:
    """Edits of other rules that make exactly a change already taken (reported, applied once)."""
    keys = {(e.start, e.end, e.replacement): e.rule for e in taken}
    return [e for e in edits if keys.get((e.start, e.end, e.replacement), e.rule) != e.rule]


# ---------------------------------------------------------------------------------------
# The one find-and-fix path. Every pipeline (Python, shell, configs, notebooks, snippets
# embedded in them) reports what it found as a `Found`; `fix` selects, applies, verifies,
# suppresses and records for `convert`, and `check` reads the same `Found` without applying.

Comments = Literal["python", "hash", "none"]


@dataclass
class Found:
    """What a pipeline found in one file.

    `findings` carry their edits (character spans of `text`). `encode` turns a new text back
    into bytes the way the file was stored (encoding, BOM). `verify` returns why a new text
    is broken (it does not parse), or None. `comments` says which comments can hold a
    `# porter: ignore[...]` suppression: Python comment tokens, `#` comments, or none.
    """

    text: str
    findings: list[Finding]
    encode: Callable[[str], bytes]
    comments: Comments = "hash"
    verify: Callable[[str], str | None] | None = None
    index: LineIndex | None = None
    apis: tuple[tuple[str, str], ...] = ()  # (torch API, its status in the target's table)
    # (line, code) of every finding a suppression comment accepted (for unused suppressions).
    used: set[tuple[int, str]] = field(default_factory=set)

    def line_index(self) -> LineIndex:
        if self.index is None:
            self.index = LineIndex(self.text)
        return self.index

    def unsuppressed(self) -> tuple[list[Finding], int]:
        """The findings no suppression comment on their line accepts, and how many were dropped."""
        return split_suppressed(self.findings, suppressions(self.text, self.comments), self.used)


@dataclass(frozen=True)
class Fixed:
    """The outcome of applying a Found: what to report, the records, the new text."""

    findings: tuple[Finding, ...]  # findings without an edit (to report)
    applied: tuple[Finding, ...] = ()  # the findings whose edits were applied, in order
    records: tuple[EditRecord, ...] = ()
    new_text: str | None = None  # None: nothing changed (or the edits were refused)
    dropped: int = 0  # edits that overlapped one already taken
    refused: str | None = None  # why the edited text was not written (it would not parse)
    suppressed: int = 0


def fix(found: Found) -> Fixed:
    """Apply the edits of the unsuppressed findings: overlapping edits are dropped, the new
    text is verified, and each applied edit (and each other rule agreeing with it) is recorded."""
    findings, suppressed = found.unsuppressed()
    proposed = [f.edit for f in findings if f.edit]
    kept = tuple(f for f in findings if f.edit is None)
    edits, dropped = select_edits(proposed)
    if not edits:
        return Fixed(kept, suppressed=suppressed)
    by_edit = {id(f.edit): f for f in findings if f.edit}
    new_text = apply_edits(found.text, edits)
    problem = found.verify(new_text) if found.verify else None
    if problem is not None:
        return Fixed(kept, refused=problem, suppressed=suppressed)
    shown = sorted(edits + agreeing_duplicates(proposed, edits), key=lambda e: (e.start, e.rule))
    records = tuple(edit_records(found.text, found.line_index(), shown, edits))
    return Fixed(kept, tuple(by_edit[id(e)] for e in edits), records, new_text, len(dropped), None, suppressed)
