"""Shell scripts (`.sh`, `.bash`, and extensionless files with a sh/bash shebang).

The script is parsed with tree-sitter-bash; the checks in `_shell_checks` and
`_shell_snippets` then rename CUDA environment variables where they are set or expanded,
report `nvidia-smi` and launcher flags, apply the training-config rules to `--key value`
flags, and convert `python -c` snippets. A script that does not parse is reported and copied.
"""

from __future__ import annotations


from porter.core.edits import Found
from porter.core.model import Finding, Skipped
from porter.filetypes._common import TextFile, open_text
from porter.filetypes._shell_checks import (
    command_findings,
    env_findings,
    pip_install_findings,
    launcher_findings,
    setup_findings,
    training_flag_findings,
)
from porter.filetypes._shell_snippets import snippet_findings
from porter.filetypes._shell_syntax import Script
from porter.rules import ActiveRules
from porter.rules.kinds import ConfigKeyParams

KIND = "shell"


def check_script(file: TextFile, script: Script, rules: ActiveRules) -> list[Finding]:
    """Every shell finding (with edits) for a parsed script; notebooks use it for `!` lines."""
    findings: list[Finding] = []
    findings += env_findings(file, script, rules.of_kind("shell-env-var"), rules)
    findings += command_findings(file, script, rules.of_kind("shell-command"))
    findings += launcher_findings(file, script, rules.of_kind("shell-launcher-flag"))
    findings += training_flag_findings(
        file, script, [r for r in rules.of_kind("config-key") if ConfigKeyParams.of(r).launchers]
    )
    findings += setup_findings(file, script, rules.of_kind("shell-env-setup"))
    findings += pip_install_findings(file, script, rules)
    if rules.of_kind("python-snippet"):
        findings += snippet_findings(file, script, rules)
    return findings


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
