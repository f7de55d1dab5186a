"""report.html reads every file's name from changes.patch as git writes it (quoted or not)."""

from __future__ import annotations

import pytest

from porter.core.patch import file_diff
from porter.reports.html import render_html
from porter.reports.hunks import parse_patch
from report_sample import sample_report

NAMES = [
    "plain.py",
    "we ird.py",
    "ü/データ.py",
    'q"uote.py',
    "back\\slash.py",
    "tab\tname.py",
    "new\nline.py",
    "raw\udce9byte.py",
]


def _patch(names: list[str]) -> bytes:
    return b"".join(file_diff(name, f"x = {k}\n".encode(), f"x = {k + 100}\n".encode()) for k, name in enumerate(names))


@pytest.mark.parametrize("name", NAMES)
def test_each_file_keeps_its_own_hunks_whatever_its_name(name):
    # A quoted name after a plain one: its hunk used to land under the plain file's diff.
    parsed = parse_patch(_patch(["first.py", name, "last.py"]))
    assert list(parsed) == ["first.py", name, "last.py"]
    assert [[line[3] for line in parsed[p][0][3]] for p in parsed] == [
        ["x = 0", "x = 100"],
        ["x = 1", "x = 101"],
        ["x = 2", "x = 102"],
    ]


def test_the_page_shows_a_quoted_name_s_hunk_under_that_file():
    names = ["first.py", "we ird.py", "ü.py"]
    report = sample_report(
        [
            {
                "path": n,
                "kind": "python",
                "status": "changed",
                "edits": [{"rule": "PRT101", "line": 1, "col": 1, "before": f"x = {k}", "after": f"x = {k + 100}"}],
            }
            for k, n in enumerate(names)
        ]
    )
    page = render_html(report, _patch(names))
    for k, name in enumerate(names):
        start = page.index(f"<summary><code>{name}</code>")
        section = page[start : page.index("</details>", start)]
        assert f"x = {k + 100}" in section and section.count('class="add"') == 1, name
