"""A diff's HTML rows for report.html, with each finding under the line it is on.

As a code review tool shows an inline comment: a finding's box (severity, code, message,
suggestion) follows the row of its source line. Findings are on SRC's lines, so they meet
a diff line by its old number; the ones on lines no hunk shows are listed above the file's
hunks by the caller (`outside`).

Built as strings here, not by a template loop: a large port shows ~100k diff lines, and
jinja's per-line macro calls took seconds. Escaped as the template escapes (markupsafe's
entities), so every piece of source, path and message reaches the page as text.
"""

from __future__ import annotations

from collections.abc import Iterable

from markupsafe import Markup

_ROW_START = {"-": '<tr class="del"', "+": '<tr class="add"'}  # a context row has no class


def escape(text: str) -> str:
    """What the template's autoescape writes (markupsafe's entities), as a plain string."""
    return (
        text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;").replace("'", "&#39;").replace('"', "&#34;")
    )


def escape_text(text: str) -> str:
    """Source text for an element's content, where only `&`, `<` and `>` mean anything: quotes
    stay quotes (markupsafe's &#34; made a JSON or notebook diff's page several times its size)."""
    return text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")


def _rule_link(code: str) -> str:
    return f'<a class="rule" href="#rule-{escape(code)}">{escape(code)}</a>'


def finding_box(f: dict) -> str:
    """One finding as the page shows it inside a diff: severity, code, where, message, suggestion."""
    suggestion = f.get("suggestion") or ""
    return (
        f'<div class="fnd fnd-{escape(f["severity"])}"><span class="sev sev-{escape(f["severity"])}">'
        f'{escape(f["severity"])}</span> {_rule_link(f["rule"])} <span class="muted">line {f["line"]}:{f["col"]}</span> '
        f'<span class="msg">{escape(f["message"])}</span>'
        + (f'<div class="sugg"><span class="muted">suggestion:</span> {escape(suggestion)}</div>' if suggestion else "")
        + "</div>"
    )


def by_line(findings: Iterable[dict]) -> dict[int, list[dict]]:
    """A file's findings keyed by their (SRC) line, in report order."""
    out: dict[int, list[dict]] = {}
    for f in findings:
        out.setdefault(f["line"], []).append(f)
    return out


def rows(ident: str, lines, findings: dict[int, list[dict]]) -> Markup:
    """A hunk's table rows, one per diff line, each followed by the findings on its old line.
    `findings` is the file's by_line(); the lines shown here are taken out of it, so what is
    left afterwards is what no hunk shows.

    Rows are most of a large page, so they carry little: the cells (old and new number, rule
    codes, +/-, code) are styled by their column (report.css), only a line with findings has
    an id (the findings table links to it), a context row has no class."""
    out = []
    for line in lines:
        old = line.old if line.kind != "+" else None
        boxes = findings.pop(old, None) if old else None
        anchor = f' id="{escape(ident)}-L{old}"' if boxes else ""
        rules = "".join(f"{_rule_link(c)} " for c in line.rules)
        out.append(
            f"\n{_ROW_START.get(line.kind, '<tr')}{anchor}><td>{line.old or ''}</td><td>{line.new or ''}</td>"
            f'<td>{rules}</td><td>{escape_text(line.kind)}</td><td class="c">{escape_text(line.text)}</td></tr>'
        )
        if boxes:
            out.append(f'\n<tr class="fnds"><td colspan="5">{"".join(finding_box(f) for f in boxes)}</td></tr>')
    return Markup("".join(out))
