"""Check one file: the rule findings `convert` would report, plus the op scan.

A pure function of (path, bytes, options), so the runner can send it to worker
processes. A Python file is decoded and parsed once; the rule engine and the op scan read
the same tree. Other file types go through their `convert` handler, and each edit it
would make becomes a finding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from porter import filetypes
from porter.check.model import FileCheck, line_hash
from porter.check.options import CheckOptions, rules_for
from porter.check.suppress import split_suppressed, suppressions
from porter.model import Finding
from porter.optables import load_api_table
from porter.opscan import KIND, api_uses, check as op_check
from porter.pyconvert import find_python, parse, screen_pattern
from porter.pycontext import FileContext
from porter.rules import RuleSet
from porter.textio import LineIndex, decode_python


@dataclass(frozen=True)
class Task:
    """One file to check, with the options of the check."""

    rel: str
    data: bytes
    opts: CheckOptions


def wants_python(data: bytes, rules: RuleSet) -> bool:
    """Whether a Python file can produce any finding: it names torch or a rule's word."""
    return b"torch" in data or _bytes_screen(rules).search(data) is not None


def check_file(task: Task) -> FileCheck:
    """Findings of one file. Never raises: a porter bug becomes `error` on the result."""
    found = filetypes.handler_for(task.rel, task.data[:256])
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
    target, version = task.opts.target, task.opts.version
    try:
        text = decode_python(task.data).text
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        return FileCheck(task.rel, "python", skipped=f"cannot decode: {exc}")
    rules_may_fire = not task.opts.ops_only and screen_pattern(rules).search(text) is not None
    if not rules_may_fire and "torch" not in text:
        return FileCheck(task.rel, "python")
    try:
        tree = parse(text, task.rel)
    except (SyntaxError, ValueError) as exc:
        where = f" (line {exc.lineno})" if getattr(exc, "lineno", None) else ""
        return FileCheck(task.rel, "python", skipped=f"does not parse as Python 3: {getattr(exc, 'msg', exc)}{where}")
    findings: list[Finding] = []
    if rules_may_fire:
        findings += [_as_check(f) for f in find_python(task.rel, text, tree, list(active), target, version)]
    apis: tuple[tuple[str, str], ...] = ()
    op_rules = [r for r in active if r.kind == KIND]
    if "torch" in text:
        table = load_api_table(target, version)
        ctx = FileContext.build(task.rel, text, tree, target, version)
        uses = api_uses(ctx, table)
        findings += op_check(ctx, op_rules, table, uses)
        apis = tuple(sorted({(u.entry.api, u.entry.status) for u in uses}))
    return _finish(task.rel, "python", text, findings, apis, python=True)


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


def _finish(rel: str, kind: str, text: str, findings: list[Finding], apis: tuple, python: bool) -> FileCheck:
    findings, suppressed = split_suppressed(findings, suppressions(text, python))
    index = LineIndex(text)
    hashes = tuple(line_hash(index.line_text(f.line)) if f.line <= len(index.starts) else "" for f in findings)
    return FileCheck(rel, kind, tuple(findings), hashes, apis, suppressed)


@lru_cache(maxsize=None)
def _bytes_screen(rules: RuleSet) -> re.Pattern[bytes]:
    return re.compile(screen_pattern(rules).pattern.encode())
