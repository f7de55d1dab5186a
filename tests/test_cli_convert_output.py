"""What `porter convert` prints (issue 30): the errors and warnings it leaves for a person, as
`porter check` prints them, the counts, and where report.html is; -q and -v; --exclude."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from porter.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cuda_trainer"


def _run(*args: str):
    return CliRunner().invoke(main, [*args, "--isolated"], catch_exceptions=False)


@pytest.fixture
def src(tmp_path) -> Path:
    return Path(shutil.copytree(EXAMPLE, tmp_path / "repo"))


def _finding_lines(output: str) -> list[str]:
    return [
        line for line in output.splitlines() if line.startswith(("error ", "warning ", "info ", "        suggestion"))
    ]


def test_convert_lists_what_it_leaves_as_check_prints_it_and_where_the_report_is(src):
    result = _run("convert", str(src), "--target", "mlu")
    assert result.exit_code == 0, result.output
    listed = _finding_lines(result.output)
    assert listed[0].startswith(f"warning PRT412 {src}/requirements.txt:3:1  flash-attn")
    assert any(line.startswith(f"error   PRT405 {src}/train.py:28:82  FlashAttention-2") for line in listed)
    # The same lines as check's text format: one renderer.
    checked = _finding_lines(_run("check", str(src), "--target", "mlu", "-q").output)
    assert listed and all(line in checked for line in listed)
    assert "would be rewritten" not in result.output  # what convert did is an edit, not left for a person
    html = src.parent / "repo_mlu" / "porter_report" / "report.html"
    assert html.is_file() and f"report in {html}" in result.output
    assert "findings: 1 error, 1 warning, 0 info" in result.output


def test_quiet_keeps_the_counts_and_the_report_path_only(src):
    result = _run("convert", str(src), "--target", "mlu", "-q")
    assert result.exit_code == 0
    assert _finding_lines(result.output) == []
    assert "findings: 1 error, 1 warning, 0 info" in result.output and "report.html" in result.output


def test_verbose_lists_the_info_findings_too(src):
    plain = _run("convert", str(src), "--target", "mlu", "--extend-select", "PRT9", "-o", str(src.parent / "a"))
    verbose = _run("convert", str(src), "--target", "mlu", "--extend-select", "PRT9", "-o", str(src.parent / "b"), "-v")
    assert not any(line.startswith("info ") for line in _finding_lines(plain.output))
    assert any(line.startswith("info    PRT9") for line in _finding_lines(verbose.output))
    assert _run("convert", str(src), "--target", "mlu", "-q", "-v").exit_code == 2


@pytest.mark.parametrize("option", ["--exclude", "--extend-exclude"])
def test_exclude_leaves_files_unconverted_as_check_leaves_them_unscanned(src, option):
    result = _run("convert", str(src), "--target", "mlu", option, "requirements.txt")
    assert result.exit_code == 0, result.output
    out = src.parent / "repo_mlu"
    assert (out / "requirements.txt").read_bytes() == (src / "requirements.txt").read_bytes()  # copied as it is
    assert "PRT412" not in result.output  # nor reported
    checked = _run("check", str(src), "--target", "mlu", option, "requirements.txt")
    assert "requirements.txt" not in checked.output
