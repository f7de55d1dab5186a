"""The values every part of porter passes around: findings, edits and per-file results.

Matching produces findings; a finding may carry an edit (Fixit's model). One engine applies
the edits for `convert`; `check` applies none. All are frozen so per-file work stays a pure
function of (source, rules, target) and results can cross process boundaries and caches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

from porter.core.severity import SEVERITIES, Severity  # noqa: F401  (re-exported: the model's words)

FileStatus = Literal["changed", "unchanged", "skipped", "failed"]
# How `check` words a finding whose edit `convert` would apply (so both count alike).
REWRITE_PREFIX = "would be rewritten: "


def plain(value: object) -> dict:
    """The fields of one of these values as a dict, one level deep (`dataclasses.asdict`
    deep-copies every field, which costs more than the reports that use it), less those the
    class keeps for porter's own use (`UNREPORTED`)."""
    fields = dict(vars(value))
    for name in getattr(value, "UNREPORTED", ()):
        fields.pop(name, None)
    return fields


@dataclass(frozen=True)
class Edit:
    """Replace source text[start:end] (character offsets into the decoded text) by `replacement`."""

    rule: str
    start: int
    end: int
    replacement: str


# The subject of the one finding a module kept whole carries (`module:triton`): the tree's run
# folds a folder of them into one (porter/engine/folding.py).
KEPT_MODULE = "module:"
# The subject of the finding for a literal kept as a named constant (`CUDA = "cuda"` in an
# enum: `constant:cuda`): the tree's run then keeps the same literal where other modules hand
# it to that module (porter/engine/kept_constants.py).
KEPT_CONSTANT = "constant:"


@dataclass(frozen=True)
class Finding:
    """Something a rule saw. `edit` is set when the rule can fix it; then it is reported as an edit.

    `line` and `col` are 1-based (col counts characters), as editors and SARIF expect.
    """

    rule: str
    severity: Severity
    path: str
    line: int
    col: int
    message: str
    suggestion: str | None = None
    edit: Edit | None = None
    end_line: int | None = None
    end_col: int | None = None
    # The API or name the finding is about (e.g. "torch.cuda.amp.autocast"), for reports.
    subject: str | None = None


@dataclass(frozen=True)
class EditRecord:
    """An applied edit as the reports show it: the whole line before and after."""

    rule: str
    line: int
    before: str
    after: str
    # The lines ("\n"-separated, 0-based) of the original text the edit touched and of the
    # new text they became (porter/core/edit_spans.py): changes.patch is made from them. Not
    # in report.json, nor in the cache (a cached result keeps its patch).
    span: tuple[int, int, int, int] | None = field(default=None, compare=False, repr=False)
    UNREPORTED: ClassVar[tuple[str, ...]] = ("span",)


@dataclass(frozen=True)
class FileResult:
    """What happened to one file. `new_bytes` is None when the output equals the input."""

    path: str
    status: FileStatus
    kind: str = "python"
    edits: tuple[EditRecord, ...] = ()
    findings: tuple[Finding, ...] = ()
    reason: str | None = None
    new_bytes: bytes | None = field(default=None, repr=False)
    lines: int = 0  # lines of the original file, for the share of lines changed
    apis: tuple[tuple[str, str], ...] = ()  # (torch API, its status in the target's table)
    diff: bytes = field(default=b"", repr=False)  # this file's part of changes.patch


@dataclass(frozen=True)
class Skipped:
    """A pipeline's answer for a file it cannot read as its type (binary, broken syntax):
    the file is copied as it is and reported with `reason`."""

    reason: str


@dataclass(frozen=True)
class FileCheck:
    """What `porter check` learns of one file: its findings (with the hash of each finding's
    line, for baselines) and the APIs it uses."""

    path: str
    kind: str = "other"
    findings: tuple[Finding, ...] = ()
    line_hashes: tuple[str, ...] = ()
    apis: tuple[tuple[str, str], ...] = ()  # (api, status), distinct
    suppressed: int = 0
    skipped: str | None = None  # why the file could not be read as its kind
    error: str | None = None  # a porter bug: the check of this file is incomplete
