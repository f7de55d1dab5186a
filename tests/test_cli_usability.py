"""A first hour without surprises (issue 30): -h, "did you mean", the configured target
everywhere, and output that survives a full or closed stdout and hostile file names."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from porter.cli import main


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize("command", [[], *[[name] for name in main.list_commands(None)]])
def test_dash_h_is_help_on_porter_and_every_subcommand(command):
    short, long = _run(*command, "-h"), _run(*command, "--help")
    assert short.exit_code == long.exit_code == 0, short.output
    assert short.output == long.output and "-h, --help" in short.output


# report's command takes -h from the group only (porter/commands/report.py is not part of this change).
@pytest.mark.parametrize("name", [n for n in main.list_commands(None) if n != "report"])
def test_dash_h_also_on_a_command_run_on_its_own(name):
    """click keeps a command's help option from the first context that asks: a command run on
    its own first (as tests do) must not lose -h for the rest of the process."""
    command = main.get_command(None, name)
    assert CliRunner().invoke(command, ["-h"]).exit_code == 0
    assert _run(name, "-h").exit_code == 0


def _tree(tmp_path, config: str = ""):
    src = tmp_path / "repo"
    src.mkdir()
    (src / "train.py").write_text("import torch\n\nx = torch.cuda.current_device()  # porter: ignore[PRT1O1]\n")
    if config:
        (src / "pyproject.toml").write_text(f"[tool.porter]\n{config}\n")
    return src


@pytest.mark.parametrize("command", ["check", "convert"])
@pytest.mark.parametrize("option", ["--select", "--extend-select", "--ignore"])
def test_a_mistyped_code_in_an_option_gets_the_likely_one(tmp_path, command, option):
    src = _tree(tmp_path)
    result = _run(command, str(src), "--target", "mlu", option, "PRT1O1")
    assert result.exit_code == 2
    assert "unknown rule code 'PRT1O1' (did you mean PRT101?" in result.output


@pytest.mark.parametrize("key", ["select", "ignore", "extend-select"])
def test_a_mistyped_code_in_the_configuration_gets_the_likely_one(tmp_path, key):
    src = _tree(tmp_path, f'{key} = ["PRT1O"]')
    result = _run("check", str(src), "--target", "mlu")
    assert result.exit_code == 2
    assert f"key '{key}': unknown rule code 'PRT1O' (did you mean PRT10?" in result.output


def test_a_mistyped_code_in_a_suppression_comment_gets_the_likely_one(tmp_path):
    result = _run("check", str(_tree(tmp_path)), "--target", "mlu", "--isolated", "--no-cache")
    assert "PRT002" in result.output and "'PRT1O1' is not a rule code" in result.output
    assert "did you mean PRT101?" in result.output


def test_porter_rules_with_a_mistyped_code_names_the_likely_one():
    result = _run("rules", "prt4O5")
    assert result.exit_code == 2 and "did you mean PRT405?" in result.output
    far = _run("rules", "ZZZ999")  # like no code at all (PRT299 is one digit from PRT209)
    assert far.exit_code == 2 and "did you mean" not in far.output


def test_a_mistyped_subcommand_gets_the_likely_one():
    result = _run("chek", ".")
    assert result.exit_code == 2 and "No such command 'chek'; did you mean check?" in result.output
    assert "did you mean" not in _run("zzzz").output


def test_code_suggestions_read_lookalike_letters_and_prefixes():
    from porter.core.suggest import closest_codes

    codes = {"PRT101", "PRT201", "PRT211", "PRT231", "PRT405"}
    assert closest_codes("PRT2O1", codes) == ["PRT201"]  # not PRT211 or PRT231, as close to difflib
    assert closest_codes("PRT2O", codes) == ["PRT20"]  # a prefix is suggested as a prefix
    assert closest_codes("PTR405", codes) == ["PRT405"]
    assert closest_codes("PRT999", codes) == []  # PRT and a digit in common is no likeness


def test_ops_uses_the_configured_target_and_line(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.porter]\ntarget = "mlu"\ntarget-version = "2.1"\n')
    monkeypatch.chdir(tmp_path)
    result = _run("ops", "F.scaled_dot_product_attention")
    assert result.exit_code == 0, result.output
    assert "in the mlu table for torch 2.1" in result.output
    # --target over the configuration; the configured line is not carried to another target.
    other = _run("ops", "F.scaled_dot_product_attention", "--target", "hip")
    assert other.exit_code == 0 and "in the hip table" in other.output


def test_ops_without_any_target_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = _run("ops", "F.pad")
    assert result.exit_code == 2 and "no target: pass --target" in result.output


# ---------------------------------------------------------------- output robustness

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "cuda_trainer"


def _porter(args: list[str], **kwargs):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "porter", *args], stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT, **kwargs
    )


@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(
    "args",
    [["check", str(EXAMPLE), "--target", "mlu"], ["rules"], ["convert", str(EXAMPLE), "--target", "mlu", "--diff"]],
)
def test_stdout_on_a_full_device_is_one_line_not_a_traceback(args):
    with open("/dev/full", "w") as full:
        done = _porter(args, stdout=full)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == "porter: error: cannot write the output: No space left on device"


def test_closed_stdout_is_one_line_not_a_traceback():
    import os

    done = _porter(["check", str(EXAMPLE), "--target", "mlu"], preexec_fn=lambda: os.close(1))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == "porter: error: standard output is closed; nothing could be printed"


def test_a_reader_that_goes_away_ends_porter_quietly():
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before porter writes (as `| head` once it has its lines)
    try:
        done = _porter(["rules"], stdout=write_end)
    finally:
        os.close(write_end)
    assert done.returncode == 1 and done.stderr == ""


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_max_file_size_must_be_a_finite_number(tmp_path, value):
    result = _run("convert", str(_tree(tmp_path)), "--target", "mlu", "--max-file-size", value)
    assert result.exit_code == 2
    assert "Invalid value for '--max-file-size'" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(("command", "option"), [("verify", "--timeout"), ("doctor", "--timeout")])
def test_every_number_option_must_be_finite(tmp_path, command, option):
    """nan passes every range comparison: a nan timeout never expires."""
    result = _run(command, *([str(_tree(tmp_path))] if command == "verify" else []), option, "nan")
    assert result.exit_code == 2 and f"Invalid value for '{option}'" in result.output, result.output


ESC_NAME = "evil\x1b[31m\x1b]0;title\x07"


def test_escape_sequences_in_file_names_never_reach_the_terminal(tmp_path):
    src = tmp_path / "repo"
    src.mkdir()
    (src / f"{ESC_NAME}.py").write_text("import torch\nx = torch.cuda.current_device()\n")
    (src / f"big{ESC_NAME}.py").write_text("x = 1\n" * 1000)
    checked = _run("check", str(src), "--target", "mlu", "--isolated", "--no-cache", "--verbose")
    assert checked.exit_code == 0, checked.output
    assert "evil\\x1b[31m\\x1b]0;title\\x07.py:2:" in checked.output
    converted = CliRunner().invoke(
        main, ["convert", str(src), "--target", "mlu", "--isolated", "--no-cache", "--max-file-size", "0.001"]
    )
    assert "bigevil\\x1b[31m" in converted.output  # the skipped file, named
    for output in (checked.output, converted.output):
        assert "\x1b" not in output and "\x07" not in output


def test_escape_sequences_in_file_names_never_reach_github_logs_or_porter_reports_messages(tmp_path):
    """GitHub's log viewer obeys ANSI escapes as a terminal does; porter report names paths."""
    src = tmp_path / "repo"
    src.mkdir()
    (src / f"{ESC_NAME}.py").write_text("import torch\nx = torch.cuda.current_device()\n")
    annotated = _run(
        "check", str(src), "--target", "mlu", "--isolated", "--no-cache", "--format", "github", "--exit-zero"
    )
    assert "/evil\\x1b[31m\\x1b]0;title\\x07.py,line=2" in annotated.output, annotated.output
    assert "\x1b" not in annotated.output and "\x07" not in annotated.output
    folder = tmp_path / f"out{ESC_NAME}"
    folder.mkdir()
    (folder / "report.json").write_text("{}")
    rendered = _run("report", str(folder))
    assert rendered.exit_code == 2 and f"out{ESC_NAME}" not in rendered.output
    assert "outevil\\x1b[31m" in rendered.output


def test_printable_escapes_controls_undecodable_bytes_and_direction_overrides():
    from porter.core.terminal import printable

    assert printable("a\x1b[2Jb\tc\n") == "a\\x1b[2Jb\\tc\\n"
    assert printable("caf\udce9.py") == "caf\\xe9.py"  # a Latin-1 byte, as surrogateescape keeps it
    assert printable("x\u202ey\x9b") == "x\\u202ey\\x9b"
    assert printable("plain/ünïcode.py") == "plain/ünïcode.py"


def test_a_projects_rule_text_is_escaped_in_porter_rules_and_settings(tmp_path, monkeypatch):
    (tmp_path / "porter_rules").mkdir()
    (tmp_path / "porter_rules" / "house.toml").write_text("""
[[rule]]
code = "PRT801"
name = "house-rule"
kind = "qualified-name"
summary = "Sets the title\\u001b]0;owned\\u0007 of your terminal"
why = "Two lines\\nof why."
severity = "error"
applicability = "manual"
match = ["mylib.cuda_kernels.fused_adam"]
examples = [{ before = "opt = fused_adam(params)" }]
""")
    (tmp_path / "porter.toml").write_text(
        'target = "mlu"\nrules = ["porter_rules/*.toml"]\nexclude = ["\\u001b[31m"]\n'
    )
    monkeypatch.chdir(tmp_path)
    listed, explained = _run("rules"), _run("rules", "PRT801")
    settings = _run("config", str(tmp_path))
    assert "title\\x1b]0;owned\\x07 of" in listed.output and "title\\x1b]0;owned\\x07 of" in explained.output
    assert "  Why: Two lines\nof why." in explained.output  # line breaks of a text are kept
    assert 'exclude = ["\\u001b[31m"]' in settings.output  # JSON's escape
    for result in (listed, explained, settings):
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output
