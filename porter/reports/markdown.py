"""report.md: the statistics and tables of report.html, as GitHub-flavoured Markdown.

Numbers come from `compute_stats`, shared with report.html. Every cell that holds source
text, a path or a message goes through `cell()`, so a `|`, a backtick or HTML in the
user's code cannot break the table or inject markup.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from porter.reports.stats import SEVERITY_ORDER, compute_stats, file_rows, needs_review, percent


# GFM still parses inline markup inside a raw <code> tag, so these become entities everywhere:
# table pipes, code spans, emphasis, strikethrough, links and backslash escapes.
_INLINE = str.maketrans({c: f"&#{ord(c)};" for c in "|`*_~[]\\"})


def cell(text: object, code: bool = False) -> str:
    """Escape text for a GFM table cell; `code` wraps it in <code>."""
    s = html.escape("" if text is None else str(text), quote=False).translate(_INLINE)
    s = s.replace("\r", "").replace("\n", "<br>")
    return f"<code>{s}</code>" if code and s else s


def _table(headers: list[str], rows: Sequence[Sequence[object]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out.extend("| " + " | ".join(str(c) for c in row) + " |" for row in rows)
    return out + [""]


def _summary(st: dict) -> list[str]:
    f, ref, ln, sev = st["files"], st["references"], st["lines"], st["findings_by_severity"]
    out = ["## Summary", ""]
    out += _table(
        ["files scanned", "changed", "unchanged", "skipped", "failed"],
        [[f["scanned"], f["changed"], f["unchanged"], f["skipped"], f["failed"]]],
    )
    out += _table(
        ["CUDA references found", "converted", "left as findings", "conversion rate"],
        [[ref["found"], ref["converted"], ref["findings"], percent(ref["rate"])]],
    )
    if st["op_table_findings"]:
        out += [f"Op-table findings (9xx, not counted as CUDA references): {st['op_table_findings']}", ""]
    if st["cuda_sources"]:
        out += [st["cuda_sources"]["sentence"], ""]
    if st["left_out"]:
        out += [cell(st["left_out"]["sentence"]), ""]
    out += _table(
        ["lines changed", "lines scanned", "share changed"],
        [[ln["changed"], "n/a" if ln["scanned"] is None else ln["scanned"], percent(ln["share"])]],
    )
    out += _table([*SEVERITY_ORDER, "findings"], [[*(sev[k] for k in SEVERITY_ORDER), st["findings"]]])
    if st["apis_by_status"]:
        out += _table(
            ["APIs used, by support status", "count"], [[cell(k), n] for k, n in st["apis_by_status"].items()]
        )
    if st["edits_by_rule"]:
        out += [f"### Edits by rule ({st['edits']})", ""]
        out += _table(
            ["rule", "name", "edits"], [[cell(r["code"]), cell(r["name"]), r["count"]] for r in st["edits_by_rule"]]
        )
    if st["findings_by_rule"]:
        out += [f"### Findings by rule ({st['findings']})", ""]
        out += _table(
            ["rule", "name", *SEVERITY_ORDER, "total"],
            [
                [cell(r["code"]), cell(r["name"]), *(r[k] for k in SEVERITY_ORDER), r["total"]]
                for r in st["findings_by_rule"]
            ],
        )
    return out


def _files(report: dict) -> list[str]:
    rows = file_rows(report)
    shown = [r for r in rows if needs_review(r)]
    out = ["## Files", ""]
    if len(shown) < len(rows):
        out += [f"{len(rows) - len(shown)} unchanged files without findings are not listed.", ""]
    if shown:
        out += _table(
            ["file", "kind", "status", "edits", *SEVERITY_ORDER],
            [
                [
                    cell(r["path"], code=True),
                    cell(r["kind"]),
                    cell(r["status"]),
                    r["edits"],
                    *(r[k] for k in SEVERITY_ORDER),
                ]
                for r in shown
            ],
        )
    return out


def _constraints(report: dict) -> list[str]:
    """How porter_report/requirements-<target>.txt was derived, one row per distribution."""
    env = report.get("constraints")
    if not env:
        return []
    lines = [
        "## Environment",
        "",
        cell(
            f"{env['file']}: pass it to pip on the target container "
            f"(pip install -r requirements.txt -c porter_report/{env['file']}). {env['derived']}"
        ),
        "",
    ]
    rows = [
        [
            cell(c["name"], code=True),
            cell(c.get("specifier") or "not installed", code=True),
            cell(c.get("pinned") or "", code=True),
            cell(c["why"]),
            cell(c.get("source") or ""),
        ]
        for c in env["rows"]
    ]
    return lines + (_table(["distribution", "constraint", "repository's pin", "why", "source"], rows) if rows else [])


def render_markdown(report: dict) -> str:
    """The whole report.md."""
    version = f" {cell(report['target_version'])}" if report.get("target_version") else ""
    lines = [f"# porter report: {cell(report['source'])} → {cell(report['target'])}{version}", ""]
    lines += _summary(compute_stats(report))
    lines += _files(report)
    changed = [f for f in report["files"] if f.get("edits")]
    if changed:
        lines += ["## Edits", ""]
        lines += _table(
            ["where", "rule", "before", "after"],
            [
                [
                    cell(f["path"], code=True) + f":{cell(e['line'])}",
                    cell(e["rule"]),
                    cell(e["before"], code=True),
                    cell(e["after"], code=True),
                ]
                for f in changed
                for e in f["edits"]
            ],
        )
    if report["findings"]:
        lines += ["## Findings", ""]
        lines += _table(
            ["severity", "rule", "where", "message", "suggestion"],
            [
                [
                    cell(f["severity"]),
                    cell(f["rule"]),
                    cell(f["path"], code=True) + f":{cell(f['line'])}:{cell(f['col'])}",
                    cell(f["message"]),
                    cell(f.get("suggestion") or ""),
                ]
                for f in report["findings"]
            ],
        )
    lines += _constraints(report)
    odd = [f for f in report["files"] if f["status"] in ("skipped", "failed")]
    if odd:
        lines += ["## Skipped and failed files", ""]
        lines += _table(
            ["file", "status", "reason"],
            [[cell(f["path"], code=True), cell(f["status"]), cell(f.get("reason", ""))] for f in odd],
        )
    rules = report.get("rules", {})
    if rules:
        lines += ["## Rules", ""]
        lines += _table(
            ["rule", "name", "summary", "why"],
            [
                [cell(code), cell(r.get("name", ""), code=True), cell(r.get("summary", "")), cell(r.get("why", ""))]
                for code, r in sorted(rules.items())
            ],
        )
    return "\n".join(lines)
