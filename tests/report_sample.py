"""A small, complete report.json (schema_version 1) for tests that render one without converting."""

from __future__ import annotations


def sample_report(
    files: list[dict], findings: list[dict] = (), rules: dict | None = None, apis_by_status: dict | None = None
) -> dict:
    """A report over `files` (report.json's entries) and `findings`, with a summary that adds up."""
    edits = [e for f in files for e in f.get("edits", [])]
    by_rule: dict[str, int] = {}
    for e in edits:
        by_rule[e["rule"]] = by_rule.get(e["rule"], 0) + 1
    summary = {
        "files_scanned": len(files),
        "files_changed": sum(f["status"] == "changed" for f in files),
        "files_unchanged": sum(f["status"] == "unchanged" for f in files),
        "files_skipped": sum(f["status"] == "skipped" for f in files),
        "files_failed": sum(f["status"] == "failed" for f in files),
        "edits": len(edits),
        "lines_changed": len({(f["path"], e["line"]) for f in files for e in f.get("edits", [])}),
        "edits_by_rule": by_rule,
        "findings": len(findings),
        "findings_by_severity": {s: sum(f["severity"] == s for f in findings) for s in ("error", "warning", "info")},
    }
    if apis_by_status is not None:
        summary["apis_by_status"] = apis_by_status
    return {
        "schema_version": 1,
        "porter_version": "0",
        "target": "mlu",
        "source": "src",
        "rules_digest": "d",
        "summary": summary,
        "files": files,
        "findings": list(findings),
        "rules": rules or {},
    }
