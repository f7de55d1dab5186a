"""Kind `keyword-value`: a call keyword with a given literal value (`load_in_4bit=True`).

Reports the use; with `replace`, rewrites the value (only where a rule can say exactly what
the value must be on the target).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from porter.model import Finding
from porter.pycontext import FileContext
from porter.rules import Rule

REQUIRED: dict[str, type] = {"keyword": str}
OPTIONAL: dict[str, type] = {"values": list, "replace": str}


def screen_words(rules: list[Rule]) -> set[str]:
    return {r.params["keyword"] for r in rules}


def check(ctx: FileContext, rules: list[Rule]) -> Iterable[Finding]:
    by_keyword: dict[str, list[Rule]] = {}
    for rule in rules:
        by_keyword.setdefault(rule.params["keyword"], []).append(rule)
    for node in ctx.nodes(ast.keyword):
        for rule in by_keyword.get(node.arg or "", ()):
            values = rule.params.get("values")
            value = node.value
            if values is not None and not (isinstance(value, ast.Constant) and value.value in values and type(value.value) in {type(v) for v in values}):
                continue
            shown = ctx.text[slice(*ctx.span(node))]
            new = rule.params.get("replace")
            if new is None:
                yield ctx.finding(rule, node, subject=shown)
            else:
                yield ctx.finding(rule, value, f"{shown} -> {node.arg}={new}", replacement=new, subject=shown)
