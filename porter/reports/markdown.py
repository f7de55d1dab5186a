"""report.md: the same numbers and tables as report.json, as GitHub-flavoured Markdown.

Every cell that holds source text or a message goes through `cell()`, so a `|`, a backtick
or HTML in the user's code cannot break the table or inject markup.
"""

from __future__ import annotations

import html


def cell(text: object, code: bool = False) -> str:
    """Escape text for a GFM table cell."""
    s = html.escape("" if text is None else str(text), quote=False)
    s = s.replace("|", "&#124;").replace("`", "&#96;").replace("\r", "").replace("\n", "<br>")
    s = s.replace("*", "&#42;").replace("_", "&#95;") if not code else s
    return f"<code>{s}</code>" if code and s else s


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out.extend("| " + " | ".join(row) + " |" for row in rows)
    return out


def render_markdown(report: dict) -> str:
    s = report["summary"]
    lines = [
        f"# porter report: {cell(report['source'])} → {report['target']}"
        + (f" (torch_mlu {report['target_version']})" if report.get("target_version") else ""),
        "",
        *_table(["files scanned", "changed", "unchanged", "skipped", "failed", "edits", "lines changed", "findings (error / warning / info)"],
                [[str(s["files_scanned"]), str(s["files_changed"]), str(s["files_unchanged"]), str(s["files_skipped"]),
                  str(s["files_failed"]), str(s["edits"]), str(s["lines_changed"]),
                  " / ".join(str(s["findings_by_severity"][k]) for k in ("error", "warning", "info"))]]),
        "",
    ]
    rules = report.get("rules", {})
    if s["edits_by_rule"] or s["findings_by_rule"]:
        lines += ["## Rules", ""]
        codes = sorted(set(s["edits_by_rule"]) | set(s["findings_by_rule"]))
        lines += _table(["rule", "name", "edits", "findings", "summary"],
                        [[c, cell(rules.get(c, {}).get("name", "")), str(s["edits_by_rule"].get(c, 0)),
                          str(s["findings_by_rule"].get(c, 0)), cell(rules.get(c, {}).get("summary", ""))] for c in codes])
        lines.append("")
    changed = [f for f in report["files"] if f.get("edits")]
    if changed:
        lines += ["## Edits", ""]
        rows = [[cell(f["path"], code=True) + f":{e['line']}", e["rule"], cell(e["before"], code=True), cell(e["after"], code=True)]
                for f in changed for e in f["edits"]]
        lines += _table(["where", "rule", "before", "after"], rows)
        lines.append("")
    if report["findings"]:
        lines += ["## Findings", ""]
        rows = [[f["severity"], f["rule"], cell(f["path"], code=True) + f":{f['line']}:{f['col']}", cell(f["message"]), cell(f.get("suggestion") or "")]
                for f in report["findings"]]
        lines += _table(["severity", "rule", "where", "message", "suggestion"], rows)
        lines.append("")
    odd = [f for f in report["files"] if f["status"] in ("skipped", "failed")]
    if odd:
        lines += ["## Skipped and failed files", ""]
        lines += _table(["file", "status", "reason"], [[cell(f["path"], code=True), f["status"], cell(f.get("reason", ""))] for f in odd])
        lines.append("")
    return "\n".join(lines)
