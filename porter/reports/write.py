"""Write the four report files of a convert run into porter_report/.

report.md and report.html are pure functions of report.json and changes.patch, so with a
cache they are stored under a key made of those two (and porter's own code): a re-run
that changed nothing skips the rendering, the slowest part of writing the reports.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import partial
from pathlib import Path

from porter.core.files import remove_beneath, write_beneath
from porter.engine.cache import cached_texts, stored_texts
from porter.reports.json_report import joined_report, report_parts


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


def report_steps(
    report: dict, patch: bytes, root: Path, rel: str, cache_dir: Path | None = None
) -> tuple[list[Callable[[], None]], Callable[[], Path]]:
    """`write_reports` in parts: changes.patch is written now (and an earlier report.json
    and porter verify's verify.json removed), and so is each page the cache holds; the pages left to render, report.html and
    report.md, are independent steps that may run side by side (a large port's take seconds);
    then `finish()` writes report.json."""

    def put(name: str, data: bytes) -> None:
        write_beneath(root, f"{rel}/{name}" if rel else name, data)

    parts = report_parts(report)
    json_text = joined_report(parts)
    for earlier in ("report.json", "verify.json"):  # an earlier run's: they describe another tree
        remove_beneath(root, f"{rel}/{earlier}" if rel else earlier)
    put("changes.patch", patch)
    # report.md and report.html never show where OUT is, so a re-run into another OUT (a
    # fresh directory per CI job) still finds them.
    shown = "\n".join(text for key, text in parts.items() if key != "output")
    inputs = hashlib.sha256(patch).hexdigest().encode() + shown.encode("utf-8", "surrogatepass")

    def html() -> list[str]:
        from porter.reports.html import render_html  # jinja2 is loaded only when rendering

        return [render_html(report, patch)]

    def markdown() -> list[str]:
        from porter.reports.markdown import render_markdown

        return [render_markdown(report)]

    steps: list[Callable[[], None]] = []
    for name, label, render in (
        ("report.html", "porter_report_html", html),
        ("report.md", "porter_report_md", markdown),
    ):
        stored = stored_texts(cache_dir, inputs, label)
        if stored is not None:
            put(name, encoded(stored[0]))
        else:
            steps.append(partial(_render_page, put, name, cache_dir, inputs, label, render))

    def finish() -> Path:
        put("report.json", encoded(json_text))
        return root / rel if rel else root

    return steps, finish


def _render_page(
    put: Callable[[str, bytes], None],
    name: str,
    cache_dir: Path | None,
    inputs: bytes,
    label: str,
    render: Callable[[], list[str]],
) -> None:
    (text,) = cached_texts(cache_dir, inputs, label, render)
    put(name, encoded(text))
