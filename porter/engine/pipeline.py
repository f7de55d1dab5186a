"""One file through the engine: its pipeline finds, then `convert` applies or `check` reports.

Both commands go through `find` and the reporting stage (porter/engine/reporting.py) and so
see the same findings, with the same severity, position and suppressions; only what follows
differs: `convert_file` applies the edits
(porter/core/edits.py `fix`), `check_file` reports each edit as a finding it would make.
Neither raises for a porter bug: the file's result says what went wrong.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from porter.core.edits import Found, fix
from porter.core.model import REWRITE_PREFIX, FileCheck, FileResult, Finding, Skipped
from porter.engine.registry import file_type, type_for
from porter.engine.reporting import SUPPRESSION_KIND, merged_in_file, shown_in_file
from porter.engine.sources import HEAD
from porter.rules import ActiveRules


# Comment syntax of the file types whose pipeline may answer "nothing here" before looking at
# comments: their suppression comments are still checked (a bare `# porter: ignore` in a file
# no rule touches is reported too). JSON and notebooks (JSON) have none.
_NO_COMMENTS = ("json", "notebook")


def find(rel: str, data: bytes, kind: str, rules: ActiveRules) -> Found | Skipped | None:
    found = file_type(kind).find(rel, data, rules)
    if isinstance(found, Found):
        found.findings = merged_in_file(found.findings, rules, kind)
    if found is None and kind not in _NO_COMMENTS and rules.of_kind(SUPPRESSION_KIND) and b"porter" in data.lower():
        # Screened out (nothing for the rules): only its suppression comments are left to check.
        return Found(data.decode("utf-8", "replace"), [], str.encode, "python" if kind == "python" else "hash")
    return found


def convert_file(rel: str, data: bytes, kind: str, rules: ActiveRules) -> FileResult:
    """The converted file (or why not)."""
    try:
        found = find(rel, data, kind, rules)
        if found is None:
            return FileResult(rel, "unchanged", kind=kind)
        if isinstance(found, Skipped):
            return FileResult(rel, "skipped", kind=kind, reason=found.reason)
        fixed = fix(found)
        shown = tuple(shown_in_file(rel, found, fixed.findings, rules))
        if shown != fixed.findings:
            fixed = replace(fixed, findings=shown)
        if fixed.refused is not None:
            return FileResult(
                rel,
                "failed",
                kind=kind,
                findings=fixed.findings,
                apis=found.apis,
                reason=f"porter's edits would break the file ({fixed.refused}); file left unchanged",
            )
        if fixed.new_text is None:
            return FileResult(rel, "unchanged", kind=kind, findings=fixed.findings, apis=found.apis)
        return FileResult(
            rel,
            "changed",
            kind=kind,
            edits=fixed.records,
            findings=fixed.findings,
            new_bytes=found.encode(fixed.new_text),
            apis=found.apis,
            reason=f"{fixed.dropped} overlapping edit(s) dropped" if fixed.dropped else None,
        )
    except (RecursionError, MemoryError) as exc:  # the file, not porter: CPython cannot compile it either
        return FileResult(rel, "skipped", kind=kind, reason=too_complex(exc))
    except Exception as exc:  # a porter bug must not stop the run: report it for this file
        return FileResult(rel, "failed", kind=kind, reason=f"internal error: {type(exc).__name__}: {exc}")


def too_complex(exc: BaseException) -> str:
    """Why a file is skipped whose syntax tree is too deep or too large to build (a 10,000-branch
    elif chain, a 5,000-term expression): CPython's own compiler gives up on those too."""
    what = "too deeply nested" if isinstance(exc, RecursionError) else "too large"
    return f"{what} for Python's parser ({type(exc).__name__}); copied as it is, not converted"


def line_hash(line_text: str) -> str:
    """Hash of a line's text without surrounding whitespace (indentation changes are moves)."""
    return hashlib.sha256(line_text.strip().encode("utf-8")).hexdigest()[:16]


def check_file(rel: str, data: bytes, kind: str, rules: ActiveRules) -> FileCheck:
    """The findings of one file as `check` reports them: an edit is a finding it would make."""
    try:
        found = find(rel, data, kind, rules)
        if found is None:
            return FileCheck(rel, kind)
        if isinstance(found, Skipped):
            return FileCheck(rel, kind, skipped=found.reason)
        findings, suppressed = found.unsuppressed()
        findings = shown_in_file(rel, found, findings, rules)
        if not findings:
            return FileCheck(rel, kind, (), (), found.apis, suppressed)
        findings = [_as_check(f) for f in findings]
        index = found.line_index()
        hashes = tuple(line_hash(index.line_text(f.line)) if f.line <= len(index.starts) else "" for f in findings)
        return FileCheck(rel, kind, tuple(findings), hashes, found.apis, suppressed)
    except (RecursionError, MemoryError) as exc:
        return FileCheck(rel, kind, skipped=too_complex(exc))
    except Exception as exc:  # a porter bug must not stop the run: report it for this file
        return FileCheck(rel, kind, error=f"internal error: {type(exc).__name__}: {exc}")


def _as_check(finding: Finding) -> Finding:
    """A finding that carries an edit: in check it is reported, not applied."""
    if finding.edit is None:
        return finding
    return replace(finding, message=f"{REWRITE_PREFIX}{finding.message}", edit=None)


def convert_bytes(rel: str, data: bytes, rules: ActiveRules) -> tuple[str | None, FileResult]:
    """(file type, result) of converting one file known only by its path and bytes."""
    found = type_for(rel, data[:HEAD])
    if found is None:
        return None, FileResult(rel, "unchanged", kind="other")
    return found.name, convert_file(rel, data, found.name, rules)


def check_bytes(rel: str, data: bytes, rules: ActiveRules) -> FileCheck:
    """`check_file` for one file known only by its path and bytes."""
    found = type_for(rel, data[:HEAD])
    return FileCheck(rel) if found is None else check_file(rel, data, found.name, rules)
