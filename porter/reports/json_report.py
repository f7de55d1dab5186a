"""report.json, schema_version 1: the contract other tools read (README, "What you get")."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from porter import __version__
from porter.core.model import SEVERITIES, Finding, plain
from porter.rules import RuleSet

if TYPE_CHECKING:
    from porter.engine.runner import RunResult

SCHEMA_VERSION = 1


def finding_dict(f: Finding) -> dict:
    d = plain(f)
    d.pop("edit", None)
    return d


def build_report(run: RunResult, rules: RuleSet, out: Path | None, extra_findings: Sequence[Finding] = ()) -> dict:
    """The whole report as plain data."""
    files = []
    findings: list[Finding] = list(extra_findings)
    edits_by_rule: Counter[str] = Counter()
    status_count: Counter[str] = Counter()
    lines_changed = 0
    for r in run.results:
        status_count[r.status] += 1
        findings.extend(r.findings)
        edits_by_rule.update(e.rule for e in r.edits)
        lines_changed += len({e.line for e in r.edits})
        entry: dict = {"path": r.path, "kind": r.kind, "status": r.status}
        if r.reason:
            entry["reason"] = r.reason
        if r.edits:
            entry["edits"] = [plain(e) for e in r.edits]
        if r.findings:
            entry["findings"] = len(r.findings)
        files.append(entry)
    by_severity = Counter(f.severity for f in findings)
    api_status = {api: status for r in run.results for api, status in r.apis}
    used = set(edits_by_rule) | {f.rule for f in findings}
    return {
        "schema_version": SCHEMA_VERSION,
        "porter_version": __version__,
        "target": run.target,
        "target_version": run.version,
        "source": str(run.src),
        "output": str(out) if out else None,
        "rules_digest": rules.digest,
        "summary": {
            "files_scanned": len(run.results),
            "files_changed": status_count["changed"],
            "files_unchanged": status_count["unchanged"],
            "files_skipped": status_count["skipped"],
            "files_failed": status_count["failed"],
            "symlinks": len(run.symlinks),
            "edits": sum(edits_by_rule.values()),
            "lines_changed": lines_changed,
            "lines_scanned": sum(r.lines for r in run.results),
            "edits_by_rule": dict(sorted(edits_by_rule.items())),
            "findings": len(findings),
            "findings_by_severity": {s: by_severity.get(s, 0) for s in SEVERITIES},
            "findings_by_rule": dict(sorted(Counter(f.rule for f in findings).items())),
            # Distinct torch APIs the tree uses, by their status in the target's table.
            "apis_by_status": {s: n for s, n in sorted(Counter(api_status.values()).items())},
        },
        "files": files,
        "findings": [finding_dict(f) for f in sorted(findings, key=lambda f: (f.path, f.line, f.col, f.rule))],
        "rules": {
            r.code: {
                "name": r.name,
                "summary": r.summary,
                "why": r.why,
                "severity": r.severity,
                "applicability": r.applicability,
                "fix": r.fix,
                "examples": [plain(e) for e in r.examples],
            }
            for r in rules.rules
            if r.code in used
        },
        "left_out": left_out_dict(run),
    }


LEFT_OUT_SHOWN = 20  # paths report.json names of what the file selection left out (all are counted)


def left_out_dict(run: RunResult) -> dict:
    """What the file selection left out (neither scanned nor listed in `files`): how many paths
    and why (".gitignore", "exclude"; a folder is one path), how many of them git tracks (None
    where no git index says), and the first paths, tracked ones first."""
    tracked = run.left_out_tracked
    marked = set(tracked or ())
    paths = sorted(run.left_out.paths, key=lambda p: p[0] not in marked)[:LEFT_OUT_SHOWN]
    return {
        "count": sum(run.left_out.counts.values()),
        "by_reason": dict(sorted(run.left_out.counts.items())),
        "tracked": None if tracked is None else len(tracked),
        "paths": [{"path": path, "why": why, "tracked": path in marked} for path, why in paths],
    }


def report_text(report: dict) -> str:
    """report.json's text: one line per top-level scalar, per summary entry, per finding,
    per file, per rule. Readable and diffable, and written by json's C encoder (with
    `indent`, json falls back to its Python encoder, ~10x slower on a large report)."""
    return joined_report(report_parts(report))


def report_parts(report: dict) -> dict[str, str]:
    """Each top-level key's part of `report_text` (reports/write.py keys its pages by them)."""
    parts = {}
    for key, value in report.items():
        if isinstance(value, list) and value:
            body = "[\n" + ",\n".join("  " + _dumps(item) for item in value) + "\n ]"
        elif isinstance(value, dict) and value:
            body = "{\n" + ",\n".join(f"  {_dumps(k)}: {_dumps(v)}" for k, v in value.items()) + "\n }"
        else:
            body = _dumps(value)
        parts[key] = f" {_dumps(key)}: {body}"
    return parts


def joined_report(parts: dict[str, str]) -> str:
    return "{\n" + ",\n".join(parts.values()) + "\n}\n"


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)
