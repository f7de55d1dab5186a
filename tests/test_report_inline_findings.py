"""report.html shows each finding on its line inside the file's diff, as a review tool's inline comment."""

from __future__ import annotations

import re

from porter.core.patch import file_diff
from porter.reports.html import render_html
from report_sample import sample_report

OLD = "".join(f"line{k}\n" for k in range(1, 41))
NEW = OLD.replace("line5\n", "LINE5\n")


def _finding(path: str, line: int, rule: str = "PRT203", severity: str = "warning", **extra) -> dict:
    return {
        "rule": rule,
        "severity": severity,
        "path": path,
        "line": line,
        "col": 3,
        "message": f"message at {line}",
        "suggestion": f"suggestion at {line}",
        **extra,
    }


def _report(findings: list[dict]) -> dict:
    files = [
        {
            "path": "a.py",
            "kind": "python",
            "status": "changed",
            "edits": [{"rule": "PRT101", "line": 5, "col": 1, "before": "line5", "after": "LINE5"}],
        },
        {"path": "b.sh", "kind": "shell", "status": "unchanged"},
    ]
    return sample_report(files, findings)


def _diff(page: str, path: str) -> str:
    start = page.index(f"<summary><code>{path}</code>")
    return page[start : page.index("</details>", start)]


def _rows(diff: str) -> list[str]:
    """Each row's class ("" for a context row)."""
    return re.findall(r"<tr(?: class=\"(\w+)\")?[ >]", diff)


def test_a_finding_follows_the_row_of_its_line_with_everything_the_table_says():
    page = render_html(
        _report([_finding("a.py", 5, severity="error"), _finding("a.py", 7)]),
        file_diff("a.py", OLD.encode(), NEW.encode()),
    )
    diff = _diff(page, "a.py")
    # line 5 is removed (and line 7 is context): each finding's box comes right after its row
    for line in (5, 7):
        row = diff.index(f'id="diff-0-L{line}"')
        after = diff[diff.index("</tr>", row) :]
        assert after.startswith('</tr>\n<tr class="fnds">'), line
        box = after[: after.index("</tr>", 5)]
        for text in (f"message at {line}", f"suggestion at {line}", 'href="#rule-PRT203"', f"line {line}:3"):
            assert text in box, (line, text)
    assert 'sev-error">error</span>' in diff and 'sev-warning">warning</span>' in diff
    assert _rows(diff).count("fnds") == 2
    assert diff.count(' id="diff-0-L') == 2  # only lines with findings carry an id (page size)
    # the findings table is still there, one row per finding
    assert len(re.findall(r"<tr data-severity=", page)) == 2


def test_a_finding_outside_every_hunk_is_listed_at_the_file_s_top():
    page = render_html(
        _report([_finding("a.py", 30), _finding("a.py", 6)]), file_diff("a.py", OLD.encode(), NEW.encode())
    )
    diff = _diff(page, "a.py")
    top, hunks = diff.split('<table class="hunk">', 1)
    assert "Findings on lines the diff does not show" in top and "message at 30" in top and "message at 6" not in top
    assert "message at 6" in hunks and "message at 30" not in hunks


def test_without_the_patch_findings_sit_under_the_rebuilt_lines():
    page = render_html(_report([_finding("a.py", 5), _finding("a.py", 9)]))
    diff = _diff(page, "a.py")
    top, hunks = diff.split('<table class="hunk">', 1)
    assert "message at 9" in top and "message at 5" in hunks


def test_a_file_with_findings_and_no_change_gets_its_findings_listed():
    page = render_html(
        _report([_finding("b.sh", 2), _finding("setup.py", 1, rule="PRT402", severity="error")]),
        file_diff("a.py", OLD.encode(), NEW.encode()),
    )
    for path, line in (("b.sh", 2), ("setup.py", 1)):  # setup.py: a finding on a file report.json does not list
        diff = _diff(page, path)
        assert "Findings (the file is not changed)" in diff and f"message at {line}" in diff
        assert "1 finding" in diff and '<table class="hunk">' not in diff
    # the findings table links each to its file's entry
    assert re.search(r'<a href="#(diff-\d+)"><code>b.sh:2:3</code>', page)


def test_inline_findings_are_escaped():
    evil = "</td></tr><script>alert(1)</script>"
    page = render_html(
        _report([_finding("a.py", 5, message=evil, suggestion=evil)]), file_diff("a.py", OLD.encode(), NEW.encode())
    )
    assert "<script>alert" not in page and page.count("&lt;/td&gt;&lt;/tr&gt;&lt;script&gt;") >= 4
