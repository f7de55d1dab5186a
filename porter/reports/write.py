"""Write the four report files of a convert run into porter_report/.

report.md and report.html are pure functions of report.json and changes.patch, so with a
cache they are stored under a key made of those two (and porter's own code): a re-run
that changed nothing skips the rendering, the slowest part of writing the reports.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from porter.engine.cache import cached_texts
from porter.reports.json_report import report_text


def write_reports(report: dict, patch: bytes, report_dir: Path, cache_dir: Path | None = None) -> None:
    report_dir.mkdir(parents=True, exist_ok=True)
    json_text = report_text(report)
    (report_dir / "changes.patch").write_bytes(patch)
    (report_dir / "report.json").write_text(json_text, encoding="utf-8")
    # report.md and report.html never show where OUT is, so a re-run into another OUT (a
    # fresh directory per CI job) still finds them.
    shown = json.dumps({k: v for k, v in report.items() if k != "output"}, sort_keys=True)
    inputs = hashlib.sha256(patch).hexdigest().encode() + shown.encode()

    def render() -> list[str]:
        from porter.reports.html import render_html  # jinja2 is loaded only when rendering
        from porter.reports.markdown import render_markdown

        return [render_markdown(report), render_html(report, patch)]

    md, html = cached_texts(cache_dir, inputs, "porter_report", render)
    (report_dir / "report.md").write_text(md, encoding="utf-8")
    (report_dir / "report.html").write_text(html, encoding="utf-8")
