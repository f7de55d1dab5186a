"""The progress line of long commands (issue 30): drawn on a terminal's stderr only, with the
time left once it can be guessed; convert and check count the files the engine's forked
workers finish; never in logs or pipes."""

from __future__ import annotations

import io
import os
import time

import pytest
from click.testing import CliRunner

from porter.core import progress as progress_module
from porter.core.progress import Progress, counted, watching
from porter.engine.parallel import POOL_THRESHOLD, map_files


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _lines(stream: io.StringIO) -> list[str]:
    return [part.rstrip() for part in stream.getvalue().split("\r") if part.strip()]


def test_count_says_the_time_left_once_the_rate_can_be_guessed():
    clock, shown = _Clock(), io.StringIO()
    line = Progress(shown, enabled=True, label="porter check", clock=clock)
    line.count("files", 0, 1000)
    clock.now += 1
    line.count("files", 100, 1000)  # a second in: too soon to guess
    clock.now += 9
    line.count("files", 500, 1000)  # 500 files in 10 s: 10 s for the other 500
    clock.now += 290
    line.count("files", 510, 1000)
    assert _lines(shown) == [
        "porter check: files 0/1000",
        "porter check: files 100/1000",
        "porter check: files 500/1000, ~10 s left",
        "porter check: files 510/1000, ~5 min left",
    ]


def test_nothing_is_drawn_off_a_terminal_or_before_the_delay():
    piped = io.StringIO()
    Progress(piped).count("files", 1, 2)  # a StringIO is no terminal: as CI logs and pipes
    assert piped.getvalue() == ""
    clock, shown = _Clock(), io.StringIO()
    line = Progress(shown, enabled=True, delay=0.5, clock=clock)
    line.count("files", 1, 10)
    line.close()
    assert shown.getvalue() == ""  # a run that ends within the delay shows no line, and clears none
    clock.now += 1
    line.count("files", 2, 10)
    assert _lines(shown) == ["porter: files 2/10"]


def test_engine_work_is_left_alone_while_no_command_watches():
    def work(x):
        return x

    assert counted(work, 3) is work


def _slow_square(n: int) -> tuple[int, int]:
    time.sleep(0.01)
    return os.getpid(), n * n


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forked workers")
def test_files_finished_by_forked_workers_are_counted():
    shown = io.StringIO()
    tasks = list(range(120))
    with watching(Progress(shown, enabled=True)):
        results = map_files(_slow_square, tasks, lambda t: POOL_THRESHOLD, jobs=3)
    assert [square for _, square in results] == [n * n for n in tasks]
    by_parent = sum(1 for pid, _ in results if pid == os.getpid())
    counts = [int(line.split("files ")[1].split("/")[0]) for line in _lines(shown)]
    assert counts[0] == 0 and all(line.startswith("porter: files ") and "/120" in line for line in _lines(shown))
    assert by_parent < 120 and max(counts) > by_parent  # the workers' files reached the parent's line
    assert shown.getvalue().endswith("\r")  # cleared at the end


@pytest.mark.parametrize("command", ["check", "convert"])
def test_check_and_convert_draw_the_line_on_a_terminal_and_clear_it(tmp_path, monkeypatch, command):
    from porter.cli import main
    import porter.commands.check

    src = tmp_path / "repo"
    src.mkdir()
    for i in range(5):
        (src / f"m{i}.py").write_text("import torch\nx = torch.cuda.current_device()\n")
    args = [command, str(src), "--target", "mlu", "--isolated", "--no-cache", "-j", "1"]
    piped = CliRunner().invoke(main, args + (["-o", str(tmp_path / "a")] if command == "convert" else []))
    assert "files 0/5" not in piped.stderr  # CliRunner's stderr is no terminal

    monkeypatch.setattr(progress_module, "_is_terminal", lambda stream: True)
    monkeypatch.setattr(progress_module, "QUIET_START", 0)
    monkeypatch.setattr(porter.commands.check, "QUIET_START", 0)
    result = CliRunner().invoke(main, args + (["-o", str(tmp_path / "b")] if command == "convert" else []))
    assert result.exit_code in (0, 1), result.output
    assert f"\rporter {command}: files 0/5" in result.stderr and f"porter {command}: files 5/5" in result.stderr
    assert "files 5/5" not in result.stdout
    drawn = result.stderr.split("\n")[0]
    assert drawn.endswith("\r") and drawn.rstrip("\r").split("\r")[-1].strip() == ""  # cleared before the findings
