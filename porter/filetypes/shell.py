"""Shell scripts (`.sh`, `.bash`, and extensionless files with a sh/bash shebang).

The script is parsed with tree-sitter-bash; the checks in `_shell_checks` and
`_shell_snippets` then rename CUDA environment variables where they are set or expanded,
report `nvidia-smi` and launcher flags, apply the training-config rules to `--key value`
flags, and convert `python -c` snippets. A script that does not parse is reported and copied.
"""

from __future__ import annotations


from porter.core.edits import Found
from porter.core.model import Finding, Skipped
from porter.filetypes._common import TextFile, matched, open_text
from porter.filetypes._shell_checks import (
    ShellView,
    command_findings,
    env_findings,
    launcher_findings,
    pip_install_findings,
    setup_findings,
    training_flag_findings,
)
from porter.filetypes._shell_snippets import snippet_findings
from porter.filetypes._shell_syntax import Script
from porter.rules import ActiveRules
from porter.rules.kinds import REQUIREMENT_STRING, Matcher

KIND = "shell"

# The kinds a script is matched with, each behind the one interface (porter/rules/kinds.py's
# Matcher), in the order their findings are listed: adding a shell kind is its matcher and a line.
SHELL_KINDS: tuple[Matcher[ShellView], ...] = (
    Matcher("shell-env-var", env_findings),
    Matcher("shell-command", command_findings),
    Matcher("shell-launcher-flag", launcher_findings),
    Matcher("config-key", training_flag_findings),  # the flags of the launchers a rule names
    Matcher("shell-env-setup", setup_findings),
    Matcher(REQUIREMENT_STRING, pip_install_findings),  # `pip install` and `conda install` lines
    Matcher("python-snippet", snippet_findings),
)


def check_script(file: TextFile, script: Script, rules: ActiveRules) -> list[Finding]:
    """Every shell finding (with edits) for a parsed script; notebooks use it for `!` lines."""
    return matched(SHELL_KINDS, ShellView(file, script, rules), rules)


def find_shell(path: str, data: bytes, rules: ActiveRules) -> Found | Skipped | None:
    """Findings and edits for one shell script. Never raises for bad input."""
    file = open_text(path, data, "a shell script")
    if not isinstance(file, TextFile):
        return file
    script = Script(file.text)
    line = script.error_line
    if line is not None:
        return Skipped(f"does not parse as a bash script (line {line}); copied unchanged")
    return file.found(check_script(file, script, rules))
