"""Findings of several rules that are one decision, merged into one per function.

Loading a model quantized with bitsandbytes is written in many ways at once: `load_in_4bit=`
and `load_in_8bit=` (PRT403, PRT404) beside a `BitsAndBytesConfig(...)` (PRT402) in one
`from_pretrained`, or in the branches of one `if load_8bit: ... elif load_4bit: ...` that
builds its keyword arguments. Each is true, but the user decides once, for the function that
loads the model: train without bitsandbytes. Rules that name the same `one_decision` are
therefore reported once per function (or once for the module's top level), at the most
severe of them, naming the other lines. A note (in a test, under a switch) stays apart from
a finding, and edits are never merged.
"""

from __future__ import annotations

import ast
from bisect import bisect_right

from porter.core.model import SEVERITIES, Finding
from porter.core.per_file import merged_repeats
from porter.python.context import FileContext


def one_per_decision(ctx: FileContext, findings: list[Finding], decisions: dict[str, str]) -> list[Finding]:
    """`findings` with the reports of rules sharing a decision (code -> its name) merged per
    function (the innermost `def` around them)."""
    scopes = _functions(ctx)
    starts = [first for first, _ in scopes]

    def scope(line: int) -> int:
        """The first line of the innermost function holding `line` (0: the module's top level)."""
        for i in range(bisect_right(starts, line) - 1, -1, -1):
            first, last = scopes[i]
            if first <= line <= last:
                return first
        return 0

    def key(f: Finding):
        if f.rule not in decisions:
            return None
        return decisions[f.rule], scope(f.line), f.severity == "info"

    return merged_repeats(
        findings,
        key,
        lambda lead, rest: _one_decision(lead, rest, decisions[lead.rule]),
        lead=lambda f: (SEVERITIES.index(f.severity), f.line, f.col),
    )


def _functions(ctx: FileContext) -> list[tuple[int, int]]:
    """(first line, last line) of each function of the file, by first line."""
    return sorted(
        (fn.lineno, fn.end_lineno or fn.lineno) for fn in ctx.own_nodes(ast.FunctionDef, ast.AsyncFunctionDef)
    )


def _one_decision(lead: Finding, rest: list[Finding], decision: str) -> str:
    lines = sorted({f.line for f in rest} - {lead.line})
    where = (["on this line"] if any(f.line == lead.line for f in rest) else []) + (
        [f"at line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}"] if lines else []
    )
    codes = ", ".join(sorted({f.rule for f in rest}))
    return (
        f"{lead.message.rstrip('.')}. The same decision ({decision}) is also written {' and '.join(where)} ({codes})."
    )
