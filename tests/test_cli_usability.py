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
