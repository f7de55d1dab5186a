"""report.md: valid GitHub-flavoured Markdown tables, the shared statistics, untrusted text kept as text."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest

from porter.converter.run import run_convert
from porter.run_options import RunOptions
from porter.reports.markdown import cell, render_markdown

markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py (test extra) parses the GFM output")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module", params=["repos/minitrain", "report/hostile"])
def converted(request, tmp_path_factory) -> tuple[dict, str]:
    out = tmp_path_factory.mktemp("md") / "out"
    done = run_convert(ROOT / "fixtures" / request.param, RunOptions("mlu", "2.4", out=out, force=True, jobs=1))
    return done.report, (done.out / "porter_report" / "report.md").read_text(encoding="utf-8")


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def _gfm(md: str) -> _Html:
    page = _Html()
    page.feed(markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(md))
    return page


def test_tables_are_well_formed(converted):
    _, md = converted
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(md)
    widths, header = [], 0
    for tok in tokens:
        if tok.type == "thead_open":
            header, widths = 0, []
        elif tok.type == "th_open":
            header += 1
        elif tok.type == "tr_open":
            widths.append(0)
        elif tok.type == "td_open":
            widths[-1] += 1
        elif tok.type == "table_close":
            assert all(w == header for w in widths[1:]), (header, widths)
    table_lines = [line for line in md.splitlines() if line.startswith("|")]
    assert table_lines and all(line.endswith("|") for line in table_lines)
    # Each table line has exactly its columns' pipes: none leaked from the source text.
    for line in table_lines:
        assert "`" not in line


def test_statistics_match_report_json(converted):
    report, md = converted
    s = report["summary"]
    cuda_findings = sum(1 for f in report["findings"] if not f["rule"].startswith("PRT9"))
    found = s["edits"] + cuda_findings
    rate = f"{100 * s['edits'] / found:.1f}%" if s["edits"] else "n/a"  # no edit (HIP keeps names): no rate
    assert (
        f"| {s['files_scanned']} | {s['files_changed']} | {s['files_unchanged']} | {s['files_skipped']} | {s['files_failed']} |"
        in md
    )
    assert f"| {found} | {s['edits']} | {cuda_findings} | {rate} |" in md
    sev = s["findings_by_severity"]
    assert f"| {sev['error']} | {sev['warning']} | {sev['info']} | {s['findings']} |" in md
    for code, n in s["edits_by_rule"].items():
        assert f"| {code} | " in md and f" | {n} |" in md


def test_untrusted_source_stays_text(converted):
    report, md = converted
    page = _gfm(md)
    assert not {"img", "script", "b", "a", "em", "strong", "s", "del"} & set(page.tags)
    text = "".join(page.text)
    for entry in report["files"]:
        for e in entry.get("edits", []):
            assert e["before"].strip() in text  # every edited line reads back verbatim


@pytest.mark.parametrize(
    ("raw", "code", "expected"),
    [
        pytest.param("a|b", False, "a&#124;b", id="pipe"),
        pytest.param("`x`", True, "<code>&#96;x&#96;</code>", id="backtick"),
        pytest.param("__init__.py", True, "<code>&#95;&#95;init&#95;&#95;.py</code>", id="emphasis-in-code"),
        pytest.param("<img src=x>", False, "&lt;img src=x&gt;", id="html"),
        pytest.param(
            "a\\|b [l](u) ~~s~~",
            False,
            "a&#92;&#124;b &#91;l&#93;(u) &#126;&#126;s&#126;&#126;",
            id="escapes-links-strike",
        ),
        pytest.param("one\r\ntwo", False, "one<br>two", id="newline"),
        pytest.param(None, True, "", id="none"),
    ],
)
def test_cell(raw, code, expected):
    assert cell(raw, code) == expected


def test_optional_summary_fields_are_rendered(converted):
    report, md = converted
    assert "| lines changed | lines scanned | share changed |" in md
    assert ("APIs used" in md) == bool(report["summary"].get("apis_by_status"))
    richer = {
        **report,
        "summary": {**report["summary"], "lines_scanned": 1000, "apis_by_status": {"supported": 5, "unsupported": 2}},
    }
    out = render_markdown(richer)
    assert (
        f"| {report['summary']['lines_changed']} | 1000 | {100 * report['summary']['lines_changed'] / 1000:.1f}% |"
        in out
    )
    assert "| unsupported | 2 |" in out


def test_no_conversion_rate_when_nothing_is_converted():
    """On HIP, keeping CUDA's names is the intended result: no 0% conversion rate."""
    from porter.reports.stats import compute_stats

    report = {
        "summary": {
            "edits": 0,
            "files_scanned": 1,
            "files_changed": 0,
            "files_unchanged": 1,
            "files_skipped": 0,
            "files_failed": 0,
            "lines_changed": 0,
            "lines_scanned": 10,
            "edits_by_rule": {},
            "findings": 1,
            "findings_by_severity": {"warning": 1},
        },
        "findings": [{"rule": "PRT412", "severity": "warning"}],
        "rules": {},
    }
    assert compute_stats(report)["references"]["rate"] is None


@pytest.mark.parametrize("target, port", [("mlu", "BANG C"), ("hip", "hipify")])
def test_both_reports_say_how_many_cuda_sources_the_tree_holds_and_what_they_take(tmp_path, target, port):
    """No rule converts a kernel: a conversion rate over Python and scripts must not read as
    covering the tree's .cu/.cuh files (llm.c: 38 of them), so the summary counts them, names
    their folders and says what running them on the target takes."""
    src = tmp_path / "src"
    (src / "kernels").mkdir(parents=True)
    (src / "kernels" / "attention.cu").write_text("__global__ void attention() {}\n")
    (src / "kernels" / "common.cuh").write_text("#pragma once\n")
    (src / "train.py").write_text("import torch\nx = torch.ones(1).cuda()\n")
    done = run_convert(src, RunOptions(target, out=tmp_path / "out", jobs=1))
    out = done.out
    said = "CUDA C++ sources left as they are: 2 .cu/.cuh files (kernels)."
    for page in ("report.md", "report.html"):
        text = (out / "porter_report" / page).read_text(encoding="utf-8")
        assert said in text and port in text, page
    (src / "kernels" / "attention.cu").unlink()
    (src / "kernels" / "common.cuh").unlink()
    done = run_convert(src, RunOptions(target, out=tmp_path / "out2", jobs=1))
    out = done.out
    assert "CUDA C++ sources" not in (out / "porter_report" / "report.md").read_text(encoding="utf-8")


def test_the_reports_say_what_the_file_selection_left_out_and_what_git_tracks_of_it(tmp_path, monkeypatch):
    """A file .gitignore matches but git tracks (InternVL's eval results under an ignored
    folder) was neither scanned nor listed, and nothing said so: report.json counts what was
    left out and why, names the first paths (tracked ones first), and both pages say it, with
    how to scan them; a re-run answered from the tree index says the same."""
    import json
    import subprocess

    import porter.engine.tree_index

    monkeypatch.setattr(porter.engine.tree_index, "RACY_NS", 0)  # the second run trusts the index at once
    src = tmp_path / "src"
    (src / "results").mkdir(parents=True)
    (src / "train.py").write_text("import torch\nx = torch.ones(1).cuda()\n")
    (src / "results" / "eval.py").write_text("import torch\ny = torch.ones(1).cuda()\n")
    (src / "scratch.py").write_text("z = 1\n")
    (src / ".gitignore").write_text("results/\nscratch.py\n")
    git = ["git", "-C", str(src), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "train.py", ".gitignore"], check=True)
    subprocess.run([*git, "add", "-f", "results/eval.py"], check=True)  # tracked, though ignored
    cache = tmp_path / "cache"
    for n in (1, 2):  # the second run lists the tree from its index
        done = run_convert(src, RunOptions("mlu", out=tmp_path / f"out{n}", jobs=1, cache_dir=cache))
        report, out = done.report, done.out
        assert report["left_out"] == {
            "count": 2,
            "by_reason": {".gitignore": 2},
            "tracked": 1,
            "paths": [
                {"path": "results/", "why": ".gitignore", "tracked": True},
                {"path": "scratch.py", "why": ".gitignore", "tracked": False},
            ],
        }
        said = json.loads((out / "porter_report" / "report.json").read_text())["left_out"]["count"]
        assert said == 2
        for page in ("report.md", "report.html"):
            text = (out / "porter_report" / page).read_text(encoding="utf-8")
            assert "Left out by the file selection" in text and "Git tracks 1 of them" in text, page
            assert "--no-respect-gitignore" in text, page
