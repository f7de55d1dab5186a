"""report.html's summary charts: findings by severity, rule and folder, and API support on the target."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from porter.reports.charts import TOP, charts
from porter.reports.html import render_html
from report_sample import sample_report


def _findings() -> list[dict]:
    out = []
    for k in range(TOP + 2):  # two rules more than a chart shows
        for n in range(k + 1):
            out.append(
                {
                    "rule": f"PRT{100 + k}",
                    "severity": ("error", "warning", "info")[n % 3],
                    "path": f"pkg/sub{k % 4}/m{n}.py" if k % 5 else "top.py",
                    "line": 1,
                    "col": 1,
                    "message": "m",
                }
            )
    return out


class _Charts(HTMLParser):
    """Per chart: its title, and (label, count, bar length) per bar, as the page shows them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.charts: dict[str, dict] = {}
        self._chart = self._field = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "figure" and "chart" in a.get("class", ""):
            self._chart = self.charts.setdefault(a["id"], {"title": "", "bars": []})
        elif self._chart is None:
            return
        elif tag == "figcaption":
            self._field = "title"
        elif tag == "th":
            self._chart["bars"].append({"label": "", "count": None, "length": None})
            self._field = "label"
        elif tag == "span" and "name" in a.get("class", ""):
            self._field = None  # a rule's name follows its code: not part of the label
        elif tag == "rect" and a.get("class") != "track":
            self._chart["bars"][-1]["length"] = float(a["width"])
        elif tag == "td" and a.get("data-chart"):
            self._field = "count"

    def handle_endtag(self, tag):
        if tag == "figure":
            self._chart = None
        if tag in ("figcaption", "th", "td"):
            self._field = None

    def handle_data(self, data):
        if self._chart is None or self._field is None:
            return
        if self._field == "title":
            self._chart["title"] += data
        elif self._field == "label":
            self._chart["bars"][-1]["label"] += data.strip()
        else:
            self._chart["bars"][-1]["count"] = int(data)


def _shown(report: dict) -> dict[str, dict]:
    page = _Charts()
    page.feed(render_html(report))
    return page.charts


def test_each_chart_has_a_title_labels_counts_and_bars_in_proportion():
    findings = _findings()
    shown = _shown(
        sample_report([], findings, apis_by_status={"unknown": 2, "supported": 30, "unsupported": 3, "partial": 5})
    )
    assert set(shown) == {"chart-severity", "chart-rule", "chart-folder", "chart-apis"}
    assert all(c["title"] and c["bars"] for c in shown.values())
    severity = {b["label"]: b["count"] for b in shown["chart-severity"]["bars"]}
    assert severity == {s: sum(f["severity"] == s for f in findings) for s in ("error", "warning", "info")}
    rules = shown["chart-rule"]["bars"]
    assert len(rules) == TOP and rules[0] == {"label": f"PRT{100 + TOP + 1}", "count": TOP + 2, "length": 100.0}
    assert [b["count"] for b in rules] == sorted((b["count"] for b in rules), reverse=True)
    for chart in shown.values():
        top = max(b["count"] for b in chart["bars"])
        assert all(abs(b["length"] - 100 * b["count"] / top) < 0.01 for b in chart["bars"]), chart["title"]
    folders = {b["label"]: b["count"] for b in shown["chart-folder"]["bars"]}
    assert folders["(top folder)"] == sum(f["path"] == "top.py" for f in findings)
    assert folders["pkg/sub1"] == sum(f["path"].startswith("pkg/sub1/") for f in findings)
    apis = shown["chart-apis"]
    assert [b["label"] for b in apis["bars"]] == ["supported", "partial", "unsupported", "unknown"]
    assert "mlu" in apis["title"]


def test_a_chart_that_cuts_its_bars_says_what_it_left_out():
    findings = _findings()
    chart = next(c for c in charts(sample_report([], findings)) if c.key == "rule")
    left = sorted((sum(f["rule"] == f"PRT{100 + k}" for f in findings) for k in range(TOP + 2)))[:2]
    assert (
        chart.title == f"Findings by rule (top {TOP})" and chart.rest == f"and 2 more rules with {sum(left)} findings"
    )


def test_nothing_to_count_draws_no_chart():
    assert charts(sample_report([], [])) == []
    assert [c.key for c in charts(sample_report([], [], apis_by_status={"supported": 4}))] == ["apis"]
    assert "<figure" not in render_html(sample_report([], []))


def test_bars_are_inline_svg_within_the_page_s_policy():
    page = render_html(sample_report([], _findings()))
    # no style attribute (the CSP refuses them), no external reference: widths are SVG attributes
    assert not re.search(r"\sstyle=", page) and "xlink:href" not in page and "<img" not in page
    assert page.count("<svg ") == page.count("data-chart=") > 0
