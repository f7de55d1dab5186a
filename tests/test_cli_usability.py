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
    far = _run("rules", "PRT299")
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
