"""Check one file: the rule findings `convert` would report, plus the op scan.

A pure function of (path, bytes, options), so the runner can send it to worker
processes. A Python file is decoded and parsed once; the rule engine and the op scan read
the same tree. Other file types go through their `convert` handler, and each edit it
would make becomes a finding.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from porter import filetypes
from porter.check.model import FileCheck, line_hash
from porter.check.options import CheckOptions, rules_for
from porter.suppress import split_suppressed, suppressions
from porter.model import Finding
from porter.opscan import KIND
from porter.pyconvert import analyze_python
from porter.textio import LineIndex


@dataclass(frozen=True)
class Task:
    """One file to check, with the options of the check."""

    rel: str
    data: bytes
    opts: CheckOptions
    kind: str | None = None  # the file type when the caller knows it; else found from path and head


def check_file(task: Task) -> FileCheck:
    """Findings of one file. Never raises: a porter bug becomes `error` on the result."""
    found = (task.kind, filetypes.handler(task.kind)) if task.kind else filetypes.handler_for(task.rel, task.data[:256])
    if found is None:
        return FileCheck(task.rel)
    kind, handler = found
    try:
        if kind == "python":
            return _python(task)
        if task.opts.ops_only:
            return FileCheck(task.rel, kind)
        return _other(task, kind, handler)
    except Exception as exc:  # a porter bug must not stop the run: report it for this file
        return FileCheck(task.rel, kind, error=f"internal error: {type(exc).__name__}: {exc}")


def _python(task: Task) -> FileCheck:
    rules, active = rules_for(task.opts)
    if task.opts.ops_only:
        active = [r for r in active if r.kind == KIND]
    analysis = analyze_python(task.rel, task.data, rules, list(active), task.opts.version)
    if analysis is None:
        return FileCheck(task.rel, "python")
    if analysis.skipped:
        return FileCheck(task.rel, "python", skipped=analysis.skipped)
    findings = [_as_check(f) for f in analysis.findings]
    return _finish(task.rel, "python", analysis.text, findings, analysis.apis, python=True, index=analysis.index)


def _other(task: Task, kind: str, handler) -> FileCheck:
    rules, _ = rules_for(task.opts)
    result = handler(task.rel, task.data, rules, task.opts.version, task.opts.select, task.opts.ignore)
    if result.status in ("skipped", "failed") and not result.findings:
        return FileCheck(task.rel, kind, skipped=result.reason)
    findings = list(result.findings)
    for edit in result.edits:
        rule = rules.by_code(edit.rule)
        severity = rule.severity if rule else "warning"
        message = f"would be rewritten: {edit.before.strip()} -> {edit.after.strip()}"
        findings.append(Finding(edit.rule, severity, task.rel, edit.line, 1, message))
    text = task.data.decode("utf-8", errors="replace")
    return _finish(task.rel, kind, text, findings, (), python=False)


def _as_check(finding: Finding) -> Finding:
    """A finding that carries an edit: in check it is reported, not applied."""
    if finding.edit is None:
        return finding
    return replace(finding, message=f"would be rewritten: {finding.message}", edit=None)


def _finish(rel: str, kind: str, text: str, findings: list[Finding], apis: tuple, python: bool,
            index: LineIndex | None = None) -> FileCheck:
    findings, suppressed = split_suppressed(findings, suppressions(text, python))
    if not findings:
        return FileCheck(rel, kind, (), (), apis, suppressed)
    index = index or LineIndex(text)
    hashes = tuple(line_hash(index.line_text(f.line)) if f.line <= len(index.starts) else "" for f in findings)
    return FileCheck(rel, kind, tuple(findings), hashes, apis, suppressed)
