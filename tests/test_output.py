"""What `porter check` prints: severity, code, place, message and suggestion (as the README
shows), --quiet and --verbose, colour by NO_COLOR / FORCE_COLOR / a terminal, and counts
that agree with convert's report.json on the same tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from porter.checker.shown import use_color

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "cuda_trainer"
TREES = [EXAMPLE, *sorted(p for p in (ROOT / "fixtures" / "repos").iterdir() if p.is_dir())]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def porter(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "porter", *map(str, args)], capture_output=True, text=True, env=env or ENV, cwd=ROOT
    )


def test_text_shows_severity_code_place_message_and_suggestion():
    result = porter("check", EXAMPLE.relative_to(ROOT), "-t", "mlu", "--no-cache")
    lines = result.stdout.splitlines()
    at = lines.index("error   PRT405 examples/cuda_trainer/train.py:28:82  FlashAttention-2 is not available on MLU")
    assert lines[at + 1] == '        suggestion: Use attn_implementation="sdpa" (or "eager").'
    readme = (ROOT / "README.md").read_text()
    assert (
        "error   PRT405 train.py:28:82  FlashAttention-2 is not available on MLU\n"
        '        suggestion: Use attn_implementation="sdpa" (or "eager").' in readme
    )


def test_quiet_prints_findings_only_and_verbose_says_what_was_used(tmp_path):
    quiet = porter("check", EXAMPLE, "-t", "mlu", "--no-cache", "-q")
    assert quiet.returncode == 1 and "Found " not in quiet.stdout and "PRT405" in quiet.stdout
    assert quiet.stderr == ""
    verbose = porter("check", EXAMPLE, "-t", "mlu", "--no-cache", "-v")
    assert "porter: settings: no configuration file; target mlu 2.4" in verbose.stderr
    assert "porter:   python       train.py" in verbose.stderr
    assert porter("check", EXAMPLE, "-t", "mlu", "-q", "-v").returncode == 2


@pytest.mark.parametrize(
    "env,tty,want",
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": "1"}, True, False),
        ({"FORCE_COLOR": "1"}, False, True),
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, False, False),
        ({"FORCE_COLOR": "0"}, False, False),
        ({"TERM": "dumb"}, True, False),
    ],
)
def test_colour_follows_the_conventions(env, tty, want):
    assert use_color(tty, env) is want


def test_colour_reaches_a_pipe_only_when_forced():
    base = {k: v for k, v in ENV.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    plain = porter("check", EXAMPLE, "-t", "mlu", "--no-cache", env=base)
    forced = porter("check", EXAMPLE, "-t", "mlu", "--no-cache", env={**base, "FORCE_COLOR": "1"})
    assert "\x1b[" not in plain.stdout and "\x1b[31;1merror" in forced.stdout
    no = porter("check", EXAMPLE, "-t", "mlu", "--no-cache", "--format", "json", env={**base, "FORCE_COLOR": "1"})
    json.loads(no.stdout)  # never in JSON


@pytest.mark.parametrize("target", ["mlu", "hip"])
@pytest.mark.parametrize("tree", TREES, ids=[p.name for p in TREES])
def test_check_and_convert_count_the_same(tree, target, tmp_path):
    checked = porter("check", tree, "-t", target, "--no-cache", "--format", "json")
    assert checked.returncode in (0, 1), checked.stderr
    summary = json.loads(checked.stdout)["summary"]
    converted = porter("convert", tree, "-t", target, "-o", tmp_path / "out", "--no-cache")
    assert converted.returncode == 0, converted.stderr
    report = json.loads((tmp_path / "out" / "porter_report" / "report.json").read_text())["summary"]
    assert summary["files_scanned"] == report["files_scanned"]
    assert summary["findings_by_severity"] == report["findings_by_severity"]
    assert summary["rewrites"] == report["edits"]
