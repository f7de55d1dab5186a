"""Kind `keyword-value`: a keyword argument with a given literal value (`load_in_4bit=True`).

The same setting written as a call keyword, a dictionary entry (`{"load_in_4bit": True}`)
or a keyword dictionary being filled (`kwargs["load_in_4bit"] = True`) is one use.
Reports the use; with `replace`, rewrites the value (only where a rule can say exactly what
the value must be on the target).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from porter.core.model import Finding
from porter.python.context import FileContext
from porter.rules import Rule



def screen_words(rules: list[Rule]) -> set[str]:
    return {r.params["keyword"] for r in rules}


def check(ctx: FileContext, rules: list[Rule]) -> Iterable[Finding]:
    by_keyword: dict[str, list[Rule]] = {}
    for rule in rules:
        by_keyword.setdefault(rule.params["keyword"], []).append(rule)
    for where, name, value in _settings(ctx):
        for rule in by_keyword.get(name, ()):
            values = rule.params.get("values")
            if values is not None and not (isinstance(value, ast.Constant) and value.value in values and type(value.value) in {type(v) for v in values}):
                continue
            node = where
            shown = ctx.text[slice(*ctx.span(node))]
            new = rule.params.get("replace")
            if new is None:
                yield ctx.finding(rule, node, subject=shown)
            else:
                yield ctx.finding(rule, value, f"{shown} -> {name}={new}", replacement=new, subject=shown)


def _settings(ctx: FileContext) -> Iterable[tuple[ast.AST, str, ast.AST]]:
    """(node to report at, setting name, value node) for each way of writing a setting."""
    for node in ctx.nodes(ast.keyword):
        if node.arg:
            yield node, node.arg, node.value
    for node in ctx.nodes(ast.Dict):
        for key, value in zip(node.keys, node.values):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                yield key, key.value, value
    for node in ctx.nodes(ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
                yield node, target.slice.value, node.value
