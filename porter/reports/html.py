"""report.html: one self-contained page (no network) for reviewing a port.

Rendered server-side by jinja2 with autoescape on, so every piece of the user's source,
paths and messages reaches the page as text. The page's own CSS and JS are inlined and
allowed by hash in a Content-Security-Policy, so even a missed escape could not run a script.
Per-file diffs come from changes.patch when it sits beside report.json (the exact bytes a
reviewer will apply), else they are rebuilt from the edits' before/after lines (hunks.py).
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import jinja2
from markupsafe import Markup

from porter.reports import diff_rows
from porter.reports.charts import charts
from porter.reports.hunks import hunks_from_edits, hunks_from_patch, parse_patch
from porter.core.templating import environment
from porter.reports.stats import SEVERITY_ORDER, compute_stats, file_rows, needs_review, percent


def _diffs(report: dict, patch: bytes | None) -> list[dict]:
    """Each file to look at: its hunks with the findings on their lines, and the findings on
    lines no hunk shows (listed above the hunks). A file with findings and no change is one
    too, all its findings listed: report.json has no source text to show around them."""
    parsed = parse_patch(patch) if patch is not None else {}
    findings: dict[str, list[dict]] = {}
    for f in report["findings"]:
        findings.setdefault(f["path"], []).append(f)
    entries = [(entry["path"], entry.get("edits", [])) for entry in report["files"]]
    listed = {path for path, _ in entries}
    entries += [(path, []) for path in findings if path not in listed]  # project-level findings
    diffs: list[dict] = []
    for path, edits in entries:
        if not edits and path not in parsed and path not in findings:
            continue
        hunks = hunks_from_patch(parsed[path], edits) if path in parsed else hunks_from_edits(edits)
        ident, own = f"diff-{len(diffs)}", findings.get(path, [])
        left = diff_rows.by_line(own)  # rows() takes out the lines it shows
        shown = [{"header": h.header, "rules": h.rules, "rows": diff_rows.rows(ident, h.lines, left)} for h in hunks]
        outside = Markup("".join(diff_rows.finding_box(f) for line in sorted(left) for f in left[line]))
        placed = {f["line"] for f in own} - left.keys()  # the lines with an id
        diffs.append(
            {
                "id": ident,
                "path": path,
                "edits": len(edits),
                "hunks": shown,
                "outside": outside,
                "findings": len(own),
                "rules": sorted({e["rule"] for e in edits}),
                "python": path.endswith((".py", ".pyi")),
                "placed": placed,
            }
        )
    return diffs


def _finding_anchors(findings: list[dict], diffs: list[dict]) -> list[str | None]:
    # A finding links to its line in the file's diff when the diff shows it, else to the file.
    by_path = {d["path"]: d for d in diffs}
    anchors = []
    for f in findings:
        d = by_path.get(f["path"])
        anchors.append(None if d is None else f"{d['id']}-L{f['line']}" if f["line"] in d["placed"] else d["id"])
    return anchors


def breakable(path: str) -> Markup:
    """A path, escaped, that a narrow column wraps after a slash rather than inside a name."""
    return Markup("/<wbr>".join(diff_rows.escape(part) for part in path.split("/")))


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def render_html(report: dict, patch: bytes | None = None) -> str:
    """The whole page as a string; `patch` is changes.patch when available."""
    env = environment("templates/report", autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["percent"] = percent
    env.filters["breakable"] = breakable
    # Our own CSS and JS are trusted and inlined verbatim; the CSP pins them by hash.
    css, js = (Markup(env.loader.get_source(env, name)[0]) for name in ("report.css", "report.js"))
    rows = file_rows(report)
    diffs = _diffs(report, patch)
    findings = report["findings"]
    return env.get_template("report.html.j2").render(
        r=report,
        stats=compute_stats(report),
        severities=SEVERITY_ORDER,
        charts=charts(report),
        rows=rows,
        review=[needs_review(row) for row in rows],
        odd=[row for row in rows if row["status"] in ("skipped", "failed")],
        diffs=diffs,
        diff_ids={d["path"]: d["id"] for d in diffs},
        from_patch=patch is not None,
        anchors=_finding_anchors(findings, diffs),
        finding_codes=sorted({f["rule"] for f in findings}),
        finding_paths=sorted({f["path"] for f in findings}),
        css=css,
        js=js,
        csp=f"default-src 'none'; style-src {_csp_hash(css)}; script-src {_csp_hash(js)}",
    )


def write_html(report: dict, report_dir: Path) -> Path:
    """Write report_dir/report.html, using report_dir/changes.patch when present."""
    patch_path = report_dir / "changes.patch"
    patch = patch_path.read_bytes() if patch_path.is_file() else None
    target = report_dir / "report.html"
    target.write_text(render_html(report, patch), encoding="utf-8")
    return target
