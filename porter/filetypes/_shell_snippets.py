"""Kind `python-snippet`: `python -c '...'` code in shell scripts, through the Python engine.

A snippet in single quotes, or in double quotes without `$`, backquotes or backslashes, is
literal Python: its edits (with the Python rules' own codes) are spliced back in place as
long as the new text keeps the quoting valid. Otherwise, and for snippets whose Python the
shell assembles at run time, the rule reports it with the converted code as the suggestion.
"""

from __future__ import annotations

import fnmatch
import posixpath
import shlex
from collections.abc import Iterator

from porter.python.snippet import convert_snippet, moved
from porter.filetypes._shell_checks import ShellView
from porter.filetypes._shell_syntax import command_words
from porter.core.model import Finding
from porter.python.analyze import word_screen
from porter.rules import Rule
from porter.rules.kinds import PythonSnippetParams


# Characters a replacement may not contain inside each kind of quoting ('' = unquoted word).
_UNSAFE = {"'": "'", '"': '"$`\\!', "": " \t\r\n;&|<>()$`\\\"'*?[]#~{}!"}


def _code_word(words):
    for i in range(1, len(words) - 1):
        if words[i].value == "-c":
            return words[i + 1]
    return None


def snippet_findings(view: ShellView, rules: list[Rule]) -> Iterator[Finding]:
    """Findings and edits for the Python of every `python -c` in the script."""
    file, script, active = view.file, view.script, view.rules
    # A snippet that names any of the target's words is worth a finding, whichever rules run.
    screen = word_screen(active.ruleset)
    for command in script.nodes("command"):
        words = command_words(command)
        if not words or words[0].value is None:
            continue
        name = posixpath.basename(words[0].value)
        rule = next(
            (r for r in rules if any(fnmatch.fnmatchcase(name, p) for p in PythonSnippetParams.of(r).interpreters)),
            None,
        )
        code = _code_word(words) if rule is not None else None
        if rule is None or code is None:
            continue
        span = script.span(code.node)
        if code.value is None:
            if screen.search(code.node.text.decode("utf-8", "replace")):
                yield file.finding(
                    rule, span, f"{rule.summary}: the shell builds this code at run time, so porter cannot convert it"
                )
            continue
        inner = span[0] + (1 if code.quote else 0)
        result = convert_snippet(file.path, code.value, active)
        if result is None:
            if screen.search(code.value):
                yield file.finding(rule, span, f"{rule.summary}: the code does not parse as Python 3")
            continue
        for offset, finding in result.findings:
            yield moved(finding, file.path, *file.index.line_col(inner + offset))
        if not result.edits:
            continue
        if any(c in f.edit.replacement for f in result.edits for c in _UNSAFE[code.quote]):
            yield file.finding(
                rule,
                span,
                f"{rule.summary}: the converted code needs different shell quoting",
                suggestion=f"python -c {shlex.quote(result.new_text)}",
            )
            continue
        for applied in result.edits:
            edit = applied.edit
            yield file.finding(
                active.by_code(edit.rule),
                (inner + edit.start, inner + edit.end),
                applied.message,
                replacement=edit.replacement,
            )
