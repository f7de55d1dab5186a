"""Running a project's libcst codemods (porter/rules/codemods.py) on one Python file.

A codemod runs after porter's own rules, on the files its NAMES screen in (whole words, as
porter's screen), on the original text; what it changes becomes exact span edits of that
text (a diff of before and after), findings under its code that go through porter's one
find-and-fix path: the same suppressions, selection, overlap handling, patch and reports.
It is run again on its own output: a codemod that changes that too is not idempotent, and
its edits are not applied (an error naming the codemod says so). A codemod that raises on a
file is an error naming the codemod and leaves the file to porter's rules.
"""

from __future__ import annotations

import ast
import difflib
import os
import warnings
from functools import lru_cache

from porter.core.model import Edit, Finding
from porter.core.textio import LineIndex
from porter.core.wordregex import WordScreen
from porter.rules import Rule
from porter.rules.codemods import CodemodProblem, codemod_class
from porter.rules.kinds import CodemodParams


def screen_words(rules: list[Rule]) -> set[str]:
    return {name for rule in rules for name in CodemodParams.of(rule).names}


@lru_cache(maxsize=None)
def _screen(names: tuple[str, ...]) -> WordScreen:
    return WordScreen(names)


def codemod_findings(path: str, text: str, index: LineIndex, rules: list[Rule]) -> list[Finding]:
    """The findings (edits, or errors) of the active codemod rules that screen this file in."""
    out: list[Finding] = []
    for rule in rules:
        if not _screen(tuple(CodemodParams.of(rule).names)).search(text):
            continue  # not even parsed by libcst
        out.extend(_run(path, text, index, rule))
    return out


def _label(rule: Rule) -> str:
    return f"codemod {CodemodParams.of(rule).file} ({CodemodParams.of(rule).class_name})"


def _run(path: str, text: str, index: LineIndex, rule: Rule) -> list[Finding]:
    def error(message: str, line: int = 1) -> list[Finding]:
        return [
            Finding(
                rule.code,
                "error",
                path,
                line,
                1,
                f"{_label(rule)} {message}",
                "Fix the codemod (or ignore its code for this file), then run porter again.",
            )
        ]

    try:
        new = _transform(rule, path, text)
        if new is None or new == text:
            return []
        broken = _parse_problem(new, path)
        if broken is not None:
            return error(f"wrote code that does not parse ({broken}); its edits are not applied")
        again = _transform(rule, path, new)  # the idempotence check: its own output again
    except CodemodProblem as exc:
        return error(f"cannot run: {exc}")
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the user's code (sys.exit too): reported for this file, never a stop
        return error(f"raised on this file: {type(exc).__name__}: {exc}; the file is left to porter's rules")
    if again is not None and again != new:
        line = next(
            (n for n, (a, b) in enumerate(zip(new.splitlines(), again.splitlines()), 1) if a != b),
            min(len(new.splitlines()), len(again.splitlines())) + 1,
        )
        return error(
            f"is not idempotent: run on its own output it changes it again (line {line} of its output); "
            "its edits are not applied"
        )
    findings = []
    message = rule.message or rule.summary
    for start, end, replacement in span_edits(text, new):
        (line, col), (end_line, end_col) = index.line_col(start), index.line_col(end)
        findings.append(
            Finding(
                rule.code,
                rule.severity,
                path,
                line,
                col,
                message,
                rule.suggestion,
                Edit(rule.code, start, end, replacement),
                end_line,
                end_col,
                subject=CodemodParams.of(rule).class_name,
            )
        )
    return findings


def _parse_problem(text: str, path: str) -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text, filename=path)
    except (SyntaxError, ValueError) as exc:
        return f"{getattr(exc, 'msg', exc)}, line {getattr(exc, 'lineno', '?')}"
    return None


def _transform(rule: Rule, path: str, text: str) -> str | None:
    """The codemod's output for `text` (None: it skipped the file). Raises what the codemod raised."""
    from libcst.codemod import CodemodContext, SkipFile, TransformFailure, TransformSkip, transform_module

    codemod = codemod_class(rule)(CodemodContext(filename=path))
    try:
        result = transform_module(codemod, text)
    except SkipFile:
        return None
    if isinstance(result, TransformSkip):
        return None
    if isinstance(result, TransformFailure):
        raise result.error
    return result.code


def span_edits(before: str, after: str) -> list[tuple[int, int, str]]:
    """The smallest spans of `before` that, replaced, give `after`: a diff on lines, each
    changed block then trimmed to the characters that differ, so an edit touches only what
    the codemod changed (and overlaps porter's own edits only where both change the same text)."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    starts = [0]
    for line in a:
        starts.append(starts[-1] + len(line))
    edits = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        # A block of as many lines before as after is changed line by line: each edit stays on
        # its line, where a suppression comment of that line can accept it.
        pairs = (
            [(i, i + 1, j, j + 1) for i, j in zip(range(i1, i2), range(j1, j2))]
            if i2 - i1 == j2 - j1
            else [(i1, i2, j1, j2)]
        )
        for p1, p2, q1, q2 in pairs:
            old, new = "".join(a[p1:p2]), "".join(b[q1:q2])
            prefix = len(os.path.commonprefix([old, new]))
            suffix = len(os.path.commonprefix([old[prefix:][::-1], new[prefix:][::-1]]))
            if old != new:
                edits.append((starts[p1] + prefix, starts[p2] - suffix, new[prefix : len(new) - suffix]))
    return edits
