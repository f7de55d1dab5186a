"""`porter report` on report.json files that are not what porter wrote: an error line, no traceback."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from porter.commands.report import report as report_cmd
from report_sample import sample_report


def _deep(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("fmt", ["html", "md"])
@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        # inside a complete report: json's decoder recurses per level wherever the nesting is
        json.dumps(
            sample_report(
                [], [{"rule": "PRT101", "severity": "error", "path": "a.py", "line": 1, "col": 1, "message": "deep"}]
            )
        ).replace('"deep"', "[" * 100_000 + "]" * 100_000),
    ],
    ids=["bare", "in-a-finding"],
)
def test_a_deeply_nested_report_is_an_error_naming_the_file(tmp_path, text, fmt):
    (tmp_path / "report.json").write_text(text)
    result = CliRunner().invoke(report_cmd, [str(tmp_path / "report.json"), "--format", fmt])
    assert not isinstance(result.exception, RecursionError), result.exception
    assert result.exit_code == 2, result.output
    assert f"porter: {tmp_path / 'report.json'}: nested too deeply" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / f"report.{fmt}").exists()
