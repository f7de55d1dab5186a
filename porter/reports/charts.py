"""The charts report.html's summary draws: what a reviewer would rather see than read.

Findings by severity, by rule (the busiest first) and by folder, and the torch APIs the
tree uses by their support on the target. Plain data from report.json alone; the template
draws each bar as inline SVG beside its label and count (no script, no network), so the
numbers stay text for a reader, a screen reader and a test.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from porter.reports.stats import SEVERITY_ORDER
from porter.rules.kinds import API_STATUSES

TOP = 10  # bars a chart of rules or folders shows; the rest are summed in one line
TOP_FOLDER = "(top folder)"


@dataclass(frozen=True)
class Bar:
    label: str
    count: int
    length: float  # of the chart's longest bar, 0-100
    tone: str  # CSS class of its colour
    name: str = ""  # what the label stands for (a rule's name)
    href: str = ""  # where the label leads on the page


@dataclass(frozen=True)
class Chart:
    key: str
    title: str
    bars: tuple[Bar, ...]
    rest: str = ""  # what the bars leave out, as a sentence


def _bars(counts: list[tuple[str, int]], tone, name=lambda _: "", href=lambda _: "") -> tuple[Bar, ...]:
    top = max((n for _, n in counts), default=0) or 1
    return tuple(Bar(label, n, round(100 * n / top, 2), tone(label), name(label), href(label)) for label, n in counts)


def _rest(counted: Counter, what: str) -> str:
    """What the TOP bars leave out: "and 3 more folders with 7 findings", or ""."""
    left = sorted(counted.values(), reverse=True)[TOP:]
    return (
        f"and {len(left)} more {what}{'s' * (len(left) > 1)} with {sum(left)} finding{'s' * (sum(left) > 1)}"
        if left
        else ""
    )


def _title(what: str, counted: Counter) -> str:
    return f"{what} (top {TOP})" if len(counted) > TOP else what


def _busiest(counted: Counter) -> list[tuple[str, int]]:
    # The most findings first, then by name: the same order on every render.
    return sorted(counted.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]


def folder(path: str) -> str:
    """The folder a finding's path is in, as the folder chart labels it."""
    return path.rpartition("/")[0] or TOP_FOLDER


def charts(report: dict) -> list[Chart]:
    """The summary's charts; one with nothing to count is left out."""
    findings = report.get("findings", [])
    rules = report.get("rules", {})
    out = []
    if findings:
        severity = Counter(f["severity"] for f in findings)
        out.append(
            Chart(
                "severity",
                "Findings by severity",
                _bars([(s, severity[s]) for s in SEVERITY_ORDER], lambda s: f"tone-{s}"),
            )
        )
        by_rule = Counter(f["rule"] for f in findings)
        out.append(
            Chart(
                "rule",
                _title("Findings by rule", by_rule),
                _bars(
                    _busiest(by_rule),
                    lambda _: "tone-rule",
                    lambda c: rules.get(c, {}).get("name", ""),
                    lambda c: f"#rule-{c}",
                ),
                _rest(by_rule, "rule"),
            )
        )
        by_folder = Counter(folder(f["path"]) for f in findings)
        out.append(
            Chart(
                "folder",
                _title("Findings by folder", by_folder),
                _bars(_busiest(by_folder), lambda _: "tone-folder"),
                _rest(by_folder, "folder"),
            )
        )
    apis = report.get("summary", {}).get("apis_by_status") or {}
    if any(apis.values()):
        order = [s for s in API_STATUSES if s in apis] + sorted(set(apis) - set(API_STATUSES))
        out.append(
            Chart(
                "apis",
                f"torch APIs used, by support on {report.get('target', 'the target')}",
                _bars([(s, apis[s]) for s in order], lambda s: f"tone-api-{s}"),
            )
        )
    return out
