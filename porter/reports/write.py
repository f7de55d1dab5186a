"""Write the four report files of a convert run into porter_report/.

report.md and report.html are pure functions of report.json and changes.patch, so with a
cache they are stored under a key made of those two (and porter's own code): a re-run
that changed nothing skips the rendering, the slowest part of writing the reports.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from porter.core.files import remove_beneath, write_beneath
from porter.engine.cache import cached_texts
from porter.reports.json_report import report_text


REPORT_FILES = ("changes.patch", "report.json", "report.md", "report.html")


def encoded(text: str) -> bytes:
    """UTF-8 of a report's text. A file name that is not UTF-8 (read with surrogateescape)
    shows as `\\udcXX`: in report.json that is a JSON escape that reads back as the same
    name; in Markdown and HTML a visible escape instead of an invalid byte."""
    return text.encode("utf-8", "backslashreplace")


def write_reports(report: dict, patch: bytes, root: Path, rel: str, cache_dir: Path | None = None) -> Path:
    """Write the report files into `root/rel` (rel "" for `root` itself), never through a
    symbolic link below `root` (core.files.write_beneath). Each file is written whole or not
    at all; report.json, which says the report is there, is written last. Raises OSError."""
    steps, finish = report_steps(report, patch, root, rel, cache_dir)
    for step in steps:
        step()
    return finish()


def report_steps(report: dict, patch: bytes, root: Path, rel: str,
                 cache_dir: Path | None = None) -> tuple[list[Callable[[], None]], Callable[[], Path]]:
    """`write_reports` in parts: changes.patch is written now (and an earlier report.json
    removed); then report.html and report.md, independent steps that may run side by side
    (rendering a large port's pages takes seconds); then `finish()` writes report.json."""
    def put(name: str, data: bytes) -> None:
        write_beneath(root, f"{rel}/{name}" if rel else name, data)

    json_text = report_text(report)
    remove_beneath(root, f"{rel}/report.json" if rel else "report.json")  # an earlier run's: not this one's
    put("changes.patch", patch)
    # report.md and report.html never show where OUT is, so a re-run into another OUT (a
    # fresh directory per CI job) still finds them.
    shown = json.dumps({k: v for k, v in report.items() if k != "output"}, sort_keys=True)
    inputs = hashlib.sha256(patch).hexdigest().encode() + shown.encode()

    def html() -> None:
        from porter.reports.html import render_html  # jinja2 is loaded only when rendering

        (page,) = cached_texts(cache_dir, inputs, "porter_report_html", lambda: [render_html(report, patch)])
        put("report.html", encoded(page))

    def markdown() -> None:
        from porter.reports.markdown import render_markdown

        (text,) = cached_texts(cache_dir, inputs, "porter_report_md", lambda: [render_markdown(report)])
        put("report.md", encoded(text))

    def finish() -> Path:
        put("report.json", encoded(json_text))
        return root / rel if rel else root

    return [html, markdown], finish
