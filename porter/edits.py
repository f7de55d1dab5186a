"""Applying span edits to text, shared by every file type.

Edits are character spans of the original text. They are applied in order; an edit that
overlaps one already taken is dropped (and returned, so callers can report it), which keeps
application deterministic whatever order the rules fired in.
"""

from __future__ import annotations

from porter.model import Edit, EditRecord
from porter.textio import LineIndex


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
        out.append(text[pos:edit.start])
        out.append(edit.replacement)
        pos = edit.end
    out.append(text[pos:])
    return "".join(out)


def edit_records(text: str, index: LineIndex, edits: list[Edit]) -> list[EditRecord]:
    """For each edit, the whole original line(s) it touches and how they read after it."""
    records: list[EditRecord] = []
    for edit in edits:
        first, _ = index.line_col(edit.start)
        last, _ = index.line_col(max(edit.start, edit.end - 1) if edit.end > edit.start else edit.start)
        start = index.starts[first - 1]
        end = index.starts[last] if last < len(index.starts) else len(text)
        before = text[start:end]
        after = before[: edit.start - start] + edit.replacement + before[edit.end - start:]
        records.append(EditRecord(edit.rule, first, before.rstrip("\r\n"), after.rstrip("\r\n")))
    return records


def agreeing_duplicates(edits: list[Edit], taken: list[Edit]) -> list[Edit]:
    """Edits of other rules that make exactly a change already taken (reported, applied once)."""
    keys = {(e.start, e.end, e.replacement): e.rule for e in taken}
    return [e for e in edits if keys.get((e.start, e.end, e.replacement), e.rule) != e.rule]
