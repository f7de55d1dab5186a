"""The output formats of `porter check`: the registry of renderers, and the JSON one.

`text` for people, `json` in report.json's findings schema, `sarif` for GitHub code
scanning, `github` for workflow annotations. Each renderer is a pure function of a
`Shown` and returns the whole output.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from porter import __version__
from porter.checker import github, sarif, text
from porter.checker.model import severity_counts
from porter.checker.shown import Shown
from porter.reports.json_report import SCHEMA_VERSION, finding_dict


def render_json(shown: Shown) -> str:
    """report.json's schema (summary, findings[], rules{}) for the checked findings."""
    used = {c.finding.rule for c in shown.findings}
    data = {
        "schema_version": SCHEMA_VERSION,
        "porter_version": __version__,
        "target": shown.target,
        "target_version": shown.version,
        "source": str(shown.src),
        "rules_digest": shown.rules.digest,
        "summary": {
            "files_scanned": len(shown.files),
            "files_skipped": sum(1 for f in shown.files if f.skipped),
            "files_failed": sum(1 for f in shown.files if f.error),
            "findings": len(shown.findings),
            # As convert's report.json counts them: what it leaves for a person. The findings it
            # rewrites (its `edits`) are counted apart; both together are every finding shown.
            "findings_by_severity": severity_counts(shown.findings, rewrites=False),
            "rewrites": sum(1 for c in shown.findings if c.rewrite),
            "rewrites_by_severity": severity_counts(shown.findings, rewrites=True),
            "findings_by_rule": dict(shown.by_rule()),
            "suppressed": shown.suppressed,
            "baseline_accepted": shown.accepted,
            "apis_by_status": shown.api_counts(),
        },
        "findings": [{**finding_dict(c.finding), "fingerprint": c.fingerprint} for c in shown.findings],
        "rules": {
            r.code: {
                "name": r.name,
                "summary": r.summary,
                "why": r.why,
                "severity": r.severity,
                "applicability": r.applicability,
                "fix": r.fix,
            }
            for r in shown.rules.rules
            if r.code in used
        },
    }
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    # A file name that is not UTF-8 (surrogateescape) as a JSON escape, never an encoding error.
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


RENDERERS: dict[str, Callable[[Shown], str]] = {
    "text": text.render,
    "json": render_json,
    "sarif": sarif.render,
    "github": github.render,
}
