"""report.html without a browser: escaping, self-containment, statistics, diffs, `porter report`."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from porter.commands.report import report as report_cmd
from porter.converter.run import run_convert
from porter.run_options import RunOptions
from porter.reports.html import render_html, write_html
from porter.reports.hunks import hunks_from_edits, hunks_from_patch, parse_patch
from porter.reports.stats import compute_stats

ROOT = Path(__file__).resolve().parent.parent
MINITRAIN = ROOT / "fixtures" / "repos" / "minitrain"
HOSTILE = ROOT / "fixtures" / "report" / "hostile"
EVIL = "</script><img src=x onerror=alert(9)> {{ 7 * 7 }} | `tick`"


def _convert(src: Path, out: Path) -> tuple[dict, Path]:
    done = run_convert(src, RunOptions("mlu", "2.4", out=out, force=True, jobs=1))
    report, out_dir = done.report, done.out
    report_dir = out_dir / "porter_report"
    write_html(report, report_dir)
    return report, report_dir


@pytest.fixture(scope="module")
def minitrain(tmp_path_factory) -> tuple[dict, Path]:
    return _convert(MINITRAIN, tmp_path_factory.mktemp("mt") / "out")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[dict, Path]:
    return _convert(HOSTILE, tmp_path_factory.mktemp("hostile") / "out")


class _Page(HTMLParser):
    """Tags, data-stat values and text of a page, as a browser's parser would see them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.stats: dict[str, str] = {}
        self.text: list[str] = []
        self._stat: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        self._stat = attrs.get("data-stat")

    def handle_data(self, data):
        self.text.append(data)
        if self._stat:
            self.stats[self._stat] = data.strip()
            self._stat = None


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def test_untrusted_source_is_shown_as_text(hostile):
    report, report_dir = hostile
    evil = copy.deepcopy(report)
    evil["findings"].append(
        {"rule": "PRT101", "severity": "error", "path": EVIL, "line": 1, "col": 1, "message": EVIL, "suggestion": EVIL}
    )
    evil["files"].append({"path": EVIL, "kind": "python", "status": "failed", "reason": EVIL})
    html = render_html(evil, (report_dir / "changes.patch").read_bytes())
    page = _parse(html)
    tags = [t for t, _ in page.tags]
    assert tags.count("script") == 1 and html.count("</script>") == 1, "only porter's own script"
    assert "img" not in tags and "b" not in tags
    assert not any(k.startswith("on") for _, attrs in page.tags for k in attrs)
    text = "".join(page.text)
    assert "</script><img src=x onerror=alert(2)> {{ 7 * 7 }}" in text  # the edited line, verbatim
    assert "{% raw %}" in text and "> 49 |" not in text  # jinja syntax in data is never evaluated
    assert text.count(EVIL) >= 4  # path, message, suggestion, reason


def test_page_is_self_contained_and_scripts_are_pinned(minitrain):
    html = (minitrain[1] / "report.html").read_text(encoding="utf-8")
    page = _parse(html)
    for tag, attrs in page.tags:
        for key in ("src", "href"):
            assert not attrs.get(key) or attrs[key].startswith("#"), (tag, attrs)
    csp = next(a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    script = re.search(r"<script>(.*?)</script>", html, re.S)[1]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp and "default-src 'none'" in csp


def test_statistics_equal_report_json(minitrain):
    report, report_dir = minitrain
    s = report["summary"]
    shown = _parse((report_dir / "report.html").read_text(encoding="utf-8")).stats
    cuda_findings = sum(1 for f in report["findings"] if not f["rule"].startswith("PRT9"))
    expected = {
        "files.scanned": s["files_scanned"],
        "files.changed": s["files_changed"],
        "files.skipped": s["files_skipped"],
        "files.failed": s["files_failed"],
        "references.converted": s["edits"],
        "references.found": s["edits"] + cuda_findings,
        "references.findings": cuda_findings,
        "references.rate": f"{100 * s['edits'] / (s['edits'] + cuda_findings):.1f}%",
        "lines.changed": s["lines_changed"],
        "findings.total": s["findings"],
        **{f"findings.{k}": v for k, v in s["findings_by_severity"].items()},
        **{f"edits_by_rule.{k}": v for k, v in s["edits_by_rule"].items()},
        **{f"findings_by_rule.{k}": v for k, v in s["findings_by_rule"].items()},
    }
    assert {k: shown[k] for k in expected} == {k: str(v) for k, v in expected.items()}


def test_optional_summary_fields():
    report = _minimal()
    stats = compute_stats(report)
    assert stats["lines"]["share"] is None and stats["apis_by_status"] is None
    report["summary"].update(lines_scanned=200, apis_by_status={"supported": 7, "unsupported": 1})
    report["findings"].append(
        {"rule": "PRT901", "severity": "error", "path": "a.py", "line": 1, "col": 1, "message": "m"}
    )
    report["summary"]["findings"] += 1
    stats = compute_stats(report)
    assert stats["lines"]["share"] == 0.01 and stats["references"]["found"] == 2 and stats["op_table_findings"] == 1
    page = _parse(render_html(report)).stats
    assert page["lines.share"] == "1.0%" and page["apis.unsupported"] == "1" and page["references.rate"] == "50.0%"


def _minimal() -> dict:
    return {
        "schema_version": 1,
        "porter_version": "0",
        "target": "mlu",
        "target_version": None,
        "source": "s",
        "output": None,
        "rules_digest": "x",
        "rules": {},
        "summary": {
            "files_scanned": 1,
            "files_changed": 1,
            "files_unchanged": 0,
            "files_skipped": 0,
            "files_failed": 0,
            "edits": 1,
            "lines_changed": 2,
            "edits_by_rule": {"PRT101": 1},
            "findings": 1,
            "findings_by_severity": {"error": 0, "warning": 1, "info": 0},
            "findings_by_rule": {"PRT106": 1},
        },
        "files": [
            {
                "path": "a.py",
                "kind": "python",
                "status": "changed",
                "edits": [{"rule": "PRT101", "line": 3, "before": "torch.cuda.x()", "after": "torch.mlu.x()"}],
            }
        ],
        "findings": [{"rule": "PRT106", "severity": "warning", "path": "a.py", "line": 5, "col": 1, "message": "m"}],
    }


TRICKY_PATCH = b"""diff --git a/a.py b/a.py
--- a/a.py
+++ b/a.py
@@ -1,3 +1,3 @@
 x = 1
--- not a header
++++ b/not/a/file
 y = 2
@@ -20,0 +21,1 @@
+import torch_mlu
\\ No newline at end of file
diff --git a/b.py b/b.py
--- a/b.py
+++ b/b.py
@@ -4 +4 @@
-torch.cuda.x()
+torch.mlu.x()
"""


def test_patch_split_by_counts_and_hunks_name_their_rules():
    parsed = parse_patch(TRICKY_PATCH)
    assert sorted(parsed) == ["a.py", "b.py"]
    first = parsed["a.py"][0][3]
    assert [(k, o, n, t) for k, o, n, t in first] == [
        (" ", 1, 1, "x = 1"),
        ("-", 2, None, "-- not a header"),
        ("+", None, 2, "+++ b/not/a/file"),
        (" ", 3, 3, "y = 2"),
    ]
    edits = [{"rule": "PRT104", "line": 2}, {"rule": "PRT107", "line": 20}, {"rule": "PRT999", "line": 500}]
    hunks = hunks_from_patch(parsed["a.py"], edits)
    assert [h.rules for h in hunks] == [("PRT104",), ("PRT107", "PRT999")]  # far edits go to the nearest hunk
    assert hunks[0].lines[1].rules == ("PRT104",) and hunks[0].lines[2].rules == ()


def test_diff_rebuilt_from_edits_without_patch():
    hunks = hunks_from_edits(
        [
            {"rule": "PRT107", "line": 2, "before": "import torch", "after": "import torch\nimport torch_mlu"},
            {"rule": "PRT101", "line": 2, "before": "import torch", "after": "import torch"},
        ]
    )
    assert len(hunks) == 1 and hunks[0].rules == ("PRT101", "PRT107")
    assert [(line.kind, line.text) for line in hunks[0].lines] == [
        ("-", "import torch"),
        ("+", "import torch"),
        ("+", "import torch_mlu"),
        ("+", "import torch"),
    ]


def test_non_utf8_file_decoded_with_its_coding_cookie(minitrain):
    expected = (MINITRAIN / "src" / "minitrain" / "gbk_utils.py").read_bytes().decode("gbk").splitlines()[1]
    assert expected in "".join(_parse((minitrain[1] / "report.html").read_text(encoding="utf-8")).text)


def test_every_edit_is_in_a_hunk_with_its_rule(minitrain):
    report, report_dir = minitrain
    parsed = parse_patch((report_dir / "changes.patch").read_bytes())
    for entry in report["files"]:
        if entry.get("edits"):
            hunks = hunks_from_patch(parsed[entry["path"]], entry["edits"])
            codes = {c for h in hunks for c in h.rules}
            assert codes == {e["rule"] for e in entry["edits"]}, entry["path"]


def test_report_command_rerenders(minitrain, tmp_path):
    report, report_dir = minitrain
    runner = CliRunner()
    result = runner.invoke(report_cmd, [str(report_dir.parent), "--format", "html", "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == (report_dir / "report.html").read_text(encoding="utf-8")
    result = runner.invoke(report_cmd, [str(report_dir / "report.json"), "--format", "md", "-o", "-"])
    assert result.exit_code == 0 and result.output == (report_dir / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "content", ['{"schema_version": 99}', "not json", '{"schema_version": 1}'], ids=["schema", "garbage", "incomplete"]
)
def test_report_command_refuses_bad_json(tmp_path, content):
    (tmp_path / "report.json").write_text(content)
    result = CliRunner().invoke(report_cmd, [str(tmp_path / "report.json")])
    assert result.exit_code == 2 and "porter:" in result.output
    assert not (tmp_path / "report.html").exists()


def test_coding_cookie_applies_to_every_hunk_of_its_file():
    text = "# -*- coding: gbk -*-\n\u8bbe\u5907\n"
    patch = (
        b"diff --git a/g.py b/g.py\n--- a/g.py\n+++ b/g.py\n@@ -1,2 +1,2 @@\n "
        + text.splitlines()[0].encode()
        + b"\n-"
        + "\u8bbe\u5907".encode("gbk")
        + b"\n+x\n@@ -40 +40 @@\n-"
        + "\u5907".encode("gbk")
        + b"\n+y\n"
    )
    hunks = parse_patch(patch)["g.py"]
    removed = [text for *_, lines in hunks for kind, _, _, text in lines if kind == "-"]
    assert removed == ["\u8bbe\u5907", "\u5907"]


def test_report_json_text_is_the_report_one_item_per_line():
    from porter.reports.json_report import report_text

    finding = {"path": "b.py", "message": 'ü " \n'}
    report = {
        "tool": "porter",
        "summary": {"files": 2, "edits": {"PRT101": 1}},
        "findings": [{"path": "a.py", "line": 1}, finding],
        "files": [],
        "rules": {},
    }
    text = report_text(report)
    assert json.loads(text) == report
    assert "  " + json.dumps(finding, ensure_ascii=False) in text.splitlines()
    assert text.endswith("}\n")


def test_diff_rows_are_escaped_as_the_template_escapes():
    """The diff rows are built in Python (a template loop was seconds on a large port): their
    escaping is markupsafe's, character for character."""
    import random

    from markupsafe import escape

    from porter.reports.diff_rows import escape as _escape

    rng = random.Random(3)
    for _ in range(5000):
        text = "".join(rng.choice("ab<>&\"'xé\u2028\0 ") for _ in range(rng.randint(0, 12)))
        assert _escape(text) == str(escape(text)), text


def test_diff_code_reads_back_as_the_source_text_with_its_quotes_kept():
    """A diff line's code is element content: only &, < and > are escaped there (a quote as
    &#34; made a JSON diff's page several times its size), and a browser reads the source back."""
    import random

    from porter.reports.diff_rows import escape_text

    rng = random.Random(5)
    for _ in range(3000):
        text = "".join(
            rng.choice(["<", ">", "&", '"', "'", "&amp;", "<td>", "</td></tr>", "x", "é", " "])
            for _ in range(rng.randint(0, 10))
        )
        page = _parse(f'<table><tr><td class="c">{escape_text(text)}</td></tr></table>')
        assert [t for t, _ in page.tags] == ["table", "tr", "td"] and "".join(page.text) == text, text
    assert escape_text('{"a": 1}') == '{"a": 1}'


def test_diff_rows_carry_little_markup_beyond_their_code():
    """A large port's page is mostly diff rows: each context, removed and added line costs its
    code and at most 80 characters of markup (it was about 125, and each quote took 5 more)."""
    from porter.core.patch import file_diff
    from porter.reports.diff_rows import rows
    from porter.reports.hunks import hunks_from_patch, parse_patch

    old = "".join(f'    "key{i}": ["a", "b"],\n' for i in range(1, 200))
    patch = file_diff("big.json", old.encode(), old.replace('"key50"', '"KEY50"').encode())
    (hunk,) = hunks_from_patch(parse_patch(patch)["big.json"], [{"rule": "PRT101", "line": 50}])
    shown = str(rows("diff-0", hunk.lines, {})).strip().split("\n")
    assert len(shown) == len(hunk.lines) == 8
    link = '<a class="rule" href="#rule-PRT101">PRT101</a> '  # the edited line's rule code: wanted
    for line, row in zip(hunk.lines, shown):
        assert len(row.replace(link, "")) - len(line.text) <= 80, row
