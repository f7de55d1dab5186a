"""`--format github`: workflow-command annotations (`::error file=…,line=…::message`).

GitHub shows at most 10 annotations of each type per step, so errors come first and the
summary says when more were found than the page will show.
"""

from __future__ import annotations

from porter.checker.shown import Shown
from porter.core.terminal import printable
from porter.checker.text import summary_lines

_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}
_ORDER = {"error": 0, "warning": 1, "info": 2}
GITHUB_LIMIT = 10


def escape_data(value: str) -> str:
    """Escape a command's message, as the runner's toolkit does; other control characters
    (a file named with a terminal escape) as text, since GitHub's log viewer obeys them."""
    return printable(value.replace("%", "%25").replace("\r", "%0D"), lines=True).replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a property value: as the message, plus ':' and ','."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render(shown: Shown) -> str:
    lines = []
    for c in sorted(shown.findings, key=lambda c: _ORDER[c.finding.severity]):
        f = c.finding
        props = {"file": shown.display_path(f.path), "line": str(f.line), "col": str(f.col)}
        if f.end_line is not None and f.end_col is not None:
            props.update(endLine=str(f.end_line), endColumn=str(f.end_col))
        rule = shown.rules.by_code(f.rule)
        props["title"] = f"{f.rule} {rule.name}" if rule else f.rule
        message = f.message if not f.suggestion else f"{f.message}\nSuggestion: {f.suggestion}"
        rendered = ",".join(f"{k}={escape_property(v)}" for k, v in props.items())
        lines.append(f"::{_COMMANDS[f.severity]} {rendered}::{escape_data(message)}")
    lines.extend(summary_lines(shown))
    over = _over_limit(shown)
    if over:
        lines.append(
            f"GitHub shows only the first {GITHUB_LIMIT} annotations of each type per step; "
            f"this check found more: {over}. All are listed above; upload the SARIF "
            "(--format sarif) to see every one in code scanning."
        )
    return "\n".join(lines) + "\n"


def _over_limit(shown: Shown) -> str:
    counts = {kind: 0 for kind in _COMMANDS.values()}
    for c in shown.findings:
        counts[_COMMANDS[c.finding.severity]] += 1
    return ", ".join(f"{n} {kind}" for kind, n in counts.items() if n > GITHUB_LIMIT)
