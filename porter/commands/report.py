"""`porter report`: render report.html or report.md again from report.json, without converting.

A report can then be regenerated after porter's templates change, or restyled, from the
JSON contract alone; changes.patch beside report.json, when present, supplies the diffs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from porter.core.files import describe, write_atomically
from porter.core.terminal import printable
from porter.reports.html import render_html
from porter.reports.markdown import render_markdown

SUPPORTED_SCHEMA = 1


def _locate(path: Path) -> Path:
    # Accept the JSON itself, its porter_report/ folder, or the OUT tree that holds it.
    for candidate in (path, path / "report.json", path / "porter_report" / "report.json"):
        if candidate.is_file():
            return candidate
    raise click.BadParameter(f"no report.json at {path}", param_hint="REPORT_JSON")


def load_report(path: Path) -> dict:
    """Read and check a report.json; raises ValueError with a readable reason."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from exc
    except RecursionError as exc:  # json's decoder recurses per level: a hostile file ends it
        raise ValueError(f"{path}: nested too deeply to be a report.json") from exc
    found = report.get("schema_version") if isinstance(report, dict) else None
    if found != SUPPORTED_SCHEMA:
        raise ValueError(f"{path}: schema_version {found!r} is not supported (this porter reads {SUPPORTED_SCHEMA})")
    return report


def render(report: dict, fmt: str, patch: bytes | None) -> str:
    """The report in `fmt` ("html" or "md")."""
    return render_html(report, patch) if fmt == "html" else render_markdown(report)


@click.command("report")
@click.argument("report_json", metavar="REPORT_JSON", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["html", "md"]), default="html", show_default=True, help="Output format."
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    default=None,
    help="Where to write (default: report.html / report.md beside REPORT_JSON; - for stdout).",
)
def report(report_json: Path, fmt: str, output: Path | None) -> None:
    """Render REPORT_JSON (a report.json, or the folder holding it) as HTML or Markdown."""
    path = _locate(report_json)
    patch_path = path.parent / "changes.patch"
    try:
        patch = patch_path.read_bytes() if patch_path.is_file() else None
    except OSError as exc:
        click.echo(printable(f"porter: error: {describe(exc)}"), err=True)
        sys.exit(2)
    try:
        text = render(load_report(path), fmt, patch)
    except ValueError as exc:
        click.echo(printable(f"porter: {exc}"), err=True)
        sys.exit(2)
    except (KeyError, TypeError, AttributeError) as exc:
        # A hand-edited or truncated report: say what is wrong rather than a traceback.
        click.echo(printable(f"porter: {path} is not a complete report.json ({type(exc).__name__}: {exc})"), err=True)
        sys.exit(2)
    if output is not None and str(output) == "-":
        click.echo(text, nl=False)
        return
    target = output or path.parent / f"report.{fmt}"
    try:
        # Whole or not at all (temporary file, then rename); a link at the name is replaced,
        # never written through. A missing folder is an error, not made: -o names a file.
        write_atomically(target, text.encode("utf-8", "backslashreplace"))
    except OSError as exc:
        click.echo(
            printable(
                f"porter: error: {describe(exc if exc.filename else OSError(exc.errno, exc.strerror, str(target)))}"
            ),
            err=True,
        )
        sys.exit(2)
    click.echo(printable(f"porter: wrote {target}"))
