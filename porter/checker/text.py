"""`--format text`: one block per finding, then a summary.

    error   PRT405 train.py:28:82  FlashAttention-2 is not available on MLU
            suggestion: Use attn_implementation="sdpa" (or "eager").

Severity first (coloured on a terminal), then the code and `path:line:col` that editors and
terminals open, the message, and the rule's suggestion on the next line when it has one.
"""

from __future__ import annotations

from collections.abc import Iterable

from porter.checker.model import severity_counts
from porter.checker.shown import Shown, display_path
from porter.core.model import Finding
from porter.core.terminal import printable

_COLORS = {"error": "31", "warning": "33", "info": "36"}  # red, yellow, cyan
_WIDTH = 8  # "warning" and a space


def _paint(text: str, code: str, on: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if on else text


def finding_lines(f: Finding, where: str, color: bool) -> list[str]:
    """One finding's lines; `where` is its path as the user opens it."""
    sev = _paint(f.severity.ljust(_WIDTH - 1), _COLORS[f.severity] + ";1", color)
    # The path, and the message and suggestion that quote the repository's code, are the
    # repository's text: escaped, so that none of it reaches the terminal as a control sequence.
    out = [f"{sev} {_paint(f.rule, '1', color)} {printable(where)}:{f.line}:{f.col}  {printable(f.message)}"]
    if f.suggestion:
        out.append(" " * _WIDTH + _paint("suggestion: ", "2", color) + printable(f.suggestion))
    return out


def findings_text(findings: Iterable[Finding], root: str, color: bool = False) -> str:
    """Findings as this format lists them, without a summary (what `porter convert` leaves
    for a person); paths are relative to `root`, which is shown as given."""
    ordered = sorted(findings, key=lambda f: (f.path, f.line, f.col, f.rule))
    return "".join(line + "\n" for f in ordered for line in finding_lines(f, display_path(root, f.path), color))


def render(shown: Shown) -> str:
    lines = [
        line
        for c in shown.findings
        for line in finding_lines(c.finding, shown.display_path(c.finding.path), shown.color)
    ]
    if not shown.summary:
        return "\n".join(lines) + "\n" if lines else ""
    if lines:
        lines.append("")
    lines.extend(summary_lines(shown))
    return "\n".join(lines) + "\n"


def summary_lines(shown: Shown) -> list[str]:
    """Totals, findings by code, what was left out, and the APIs used per status."""
    sev = severity_counts(shown.findings)
    rewrites = sum(1 for c in shown.findings if c.rewrite)
    files = len({c.finding.path for c in shown.findings})
    scanned = len(shown.files)
    out = [
        f"Found {len(shown.findings)} finding(s) in {files} of {scanned} file(s) scanned: "
        f"{sev['error']} error, {sev['warning']} warning, {sev['info']} info"
        + (f" ({rewrites} of them `porter convert` rewrites)." if rewrites else ".")
    ]
    for code, count in shown.by_rule():
        rule = shown.rules.by_code(code)
        out.append(f"  {count:5d}  {code}  {printable(rule.name) if rule else ''}")  # a project's rule too
    hidden = []
    if shown.suppressed:
        hidden.append(f"{shown.suppressed} suppressed by comments")
    if shown.accepted:
        hidden.append(f"{shown.accepted} accepted by the baseline")
    if hidden:
        out.append("Not shown: " + ", ".join(hidden) + ".")
    apis = shown.api_counts()
    out.append("torch APIs used: " + ", ".join(f"{n} {status}" for status, n in apis.items()) + ".")
    return out
