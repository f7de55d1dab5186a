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

from porter.reports.hunks import hunks_from_edits, hunks_from_patch, parse_patch
from porter.core.templating import environment
from porter.reports.stats import SEVERITY_ORDER, compute_stats, file_rows, needs_review, percent

def _diffs(report: dict, patch: bytes | None) -> list[dict]:
    parsed = parse_patch(patch) if patch is not None else {}
    diffs = []
    for entry in report["files"]:
        edits = entry.get("edits", [])
        if not edits and entry["path"] not in parsed:
            continue
        hunks = hunks_from_patch(parsed[entry["path"]], edits) if entry["path"] in parsed else hunks_from_edits(edits)
        ident = f"diff-{len(diffs)}"
        diffs.append({"id": ident, "path": entry["path"], "edits": len(edits),
                      "hunks": [{"header": h.header, "rules": h.rules, "rows": _rows(ident, h.lines)} for h in hunks],
                      "rules": sorted({e["rule"] for e in edits}), "python": entry["path"].endswith((".py", ".pyi")),
                      "old_lines": {line.old for h in hunks for line in h.lines if line.old is not None}})
    return diffs


_ROW_CLASS = {"-": "del", "+": "add"}


def _escape(text: str) -> str:
    """What the template's autoescape writes (markupsafe's entities), as a plain string."""
    return text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;").replace("'", "&#39;").replace('"', "&#34;")


def _rows(ident: str, lines) -> Markup:
    """A hunk's table rows, one per diff line, escaped as the template escapes. Built here, not
    by a template loop: a large port shows ~100k diff lines, and jinja's per-line macro calls
    took seconds."""
    out = []
    for line in lines:
        anchor = f' id="{_escape(ident)}-L{line.old}"' if line.old and line.kind != "+" else ""
        rules = "".join(f'<a class="rule" href="#rule-{_escape(c)}">{_escape(c)}</a> ' for c in line.rules)
        out.append(f'\n<tr class="{_ROW_CLASS.get(line.kind, "ctx")}"{anchor}><td class="n">{line.old or ""}</td>'
                   f'<td class="n">{line.new or ""}</td><td class="g">{rules}</td><td class="p">{_escape(line.kind)}</td>'
                   f'<td class="c">{_escape(line.text)}</td></tr>')
    return Markup("".join(out))


def _finding_anchors(findings: list[dict], diffs: list[dict]) -> list[str | None]:
    # A finding links to its line in the file's diff when the diff shows it, else to the file.
    by_path = {d["path"]: d for d in diffs}
    anchors = []
    for f in findings:
        d = by_path.get(f["path"])
        anchors.append(None if d is None else f"{d['id']}-L{f['line']}" if f["line"] in d["old_lines"] else d["id"])
    return anchors


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def render_html(report: dict, patch: bytes | None = None) -> str:
    """The whole page as a string; `patch` is changes.patch when available."""
    env = environment("templates/report", autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["percent"] = percent
    # Our own CSS and JS are trusted and inlined verbatim; the CSP pins them by hash.
    css, js = (Markup(env.loader.get_source(env, name)[0]) for name in ("report.css", "report.js"))
    rows = file_rows(report)
    diffs = _diffs(report, patch)
    findings = report["findings"]
    return env.get_template("report.html.j2").render(
        r=report, stats=compute_stats(report), severities=SEVERITY_ORDER,
        rows=rows, review=[needs_review(row) for row in rows],
        odd=[row for row in rows if row["status"] in ("skipped", "failed")],
        diffs=diffs, diff_ids={d["path"]: d["id"] for d in diffs}, from_patch=patch is not None,
        anchors=_finding_anchors(findings, diffs),
        finding_codes=sorted({f["rule"] for f in findings}), finding_paths=sorted({f["path"] for f in findings}),
        css=css, js=js, csp=f"default-src 'none'; style-src {_csp_hash(css)}; script-src {_csp_hash(js)}",
    )


def write_html(report: dict, report_dir: Path) -> Path:
    """Write report_dir/report.html, using report_dir/changes.patch when present."""
    patch_path = report_dir / "changes.patch"
    patch = patch_path.read_bytes() if patch_path.is_file() else None
    target = report_dir / "report.html"
    target.write_text(render_html(report, patch), encoding="utf-8")
    return target
