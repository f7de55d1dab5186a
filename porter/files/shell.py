"""Shell scripts (`.sh`, `.bash`, and extensionless files with a sh/bash shebang).

The script is parsed with tree-sitter-bash; the checks in `_shell_checks` and
`_shell_snippets` then rename CUDA environment variables where they are set or expanded,
report `nvidia-smi` and launcher flags, apply the training-config rules to `--key value`
flags, and convert `python -c` snippets. A script that does not parse is reported and copied.
"""

from __future__ import annotations

import re

from porter.files._common import TextFile, build_result, open_text, skipped
from porter.files._shell_checks import (
    command_findings,
    env_findings,
    launcher_findings,
    setup_findings,
    training_flag_findings,
)
from porter.files._shell_snippets import snippet_findings
from porter.files._shell_syntax import Script
from porter.filetypes import register
from porter.model import FileResult, Finding
from porter.pyconvert import active_rules
from porter.rules import RuleSet

KIND = "shell"
_SHEBANG = re.compile(rb"^#![ \t]*\S*?/(?:env[ \t]+)?(?:ba|da|k)?sh\b")


def is_shell(rel: str, head: bytes) -> bool:
    name = rel.rsplit("/", 1)[-1]
    if name.endswith((".sh", ".bash")):
        return True
    return "." not in name and bool(_SHEBANG.match(head))


def check_script(file: TextFile, script: Script, rules: RuleSet, version: str | None,
                 select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> list[Finding]:
    """Every shell finding (with edits) for a parsed script; notebooks use it for `!` lines."""
    active = active_rules(rules, version, select, ignore)
    of_kind = {}
    for rule in active:
        of_kind.setdefault(rule.kind, []).append(rule)
    findings: list[Finding] = []
    findings += env_findings(file, script, of_kind.get("shell-env-var", []), rules)
    findings += command_findings(file, script, of_kind.get("shell-command", []))
    findings += launcher_findings(file, script, of_kind.get("shell-launcher-flag", []))
    findings += training_flag_findings(file, script, [r for r in of_kind.get("config-key", []) if r.params.get("cli")])
    findings += setup_findings(file, script, of_kind.get("shell-env-setup", []))
    if of_kind.get("python-snippet"):
        findings += snippet_findings(file, script, of_kind["python-snippet"], active, rules, version)
    return findings


def convert_shell(path: str, data: bytes, rules: RuleSet, version: str | None = None,
                  select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> FileResult:
    """Findings and edits for one shell script. Never raises for bad input."""
    file = open_text(path, data, KIND, "a shell script")
    if isinstance(file, FileResult):
        return file
    script = Script(file.text)
    line = script.error_line
    if line is not None:
        return skipped(path, KIND, f"does not parse as a bash script (line {line}); copied unchanged")
    return build_result(file, check_script(file, script, rules, version, select, ignore), KIND)


register(is_shell, KIND, convert_shell)
