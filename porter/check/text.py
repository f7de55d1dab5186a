"""`--format text`: one line per finding (`file:line:col: CODE message`), then a summary."""

from __future__ import annotations

from porter.check.shown import Shown
from porter.check.model import severity_counts


def render(shown: Shown) -> str:
    lines = [
        f"{shown.display_path(c.finding.path)}:{c.finding.line}:{c.finding.col}: {c.finding.rule} {c.finding.message}"
        for c in shown.findings
    ]
    if lines:
        lines.append("")
    lines.extend(summary_lines(shown))
    return "\n".join(lines) + "\n"


def summary_lines(shown: Shown) -> list[str]:
    """Totals, findings by code, what was left out, and the APIs used per status."""
    sev = severity_counts(shown.findings)
    files = len({c.finding.path for c in shown.findings})
    out = [f"Found {len(shown.findings)} finding(s) in {files} file(s): "
           f"{sev['error']} error, {sev['warning']} warning, {sev['info']} info."]
    for code, count in shown.by_rule():
        rule = shown.rules.by_code(code)
        out.append(f"  {count:5d}  {code}  {rule.name if rule else ''}")
    hidden = []
    if shown.suppressed:
        hidden.append(f"{shown.suppressed} suppressed by comments")
    if shown.accepted:
        hidden.append(f"{shown.accepted} accepted by the baseline")
    if hidden:
        out.append("Not shown: " + ", ".join(hidden) + ".")
    apis = shown.result.api_counts()
    out.append("torch APIs used: " + ", ".join(f"{n} {status}" for status, n in apis.items()) + ".")
    return out
