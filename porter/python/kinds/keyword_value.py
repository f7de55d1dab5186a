"""Kind `keyword-value`: a keyword argument with a given literal value (`load_in_4bit=True`).

The same setting written as a call keyword, a dictionary entry (`{"load_in_4bit": True}`)
or a keyword dictionary being filled (`kwargs["load_in_4bit"] = True`) is one use.
Reports the use; with `replace`, rewrites the value (only where a rule can say exactly what
the value must be on the target).

With `calls`, a call keyword counts only in calls of those names (the last component:
`from_pretrained`, `BitsAndBytesConfig`) or into those packages (`transformers`): the same
keyword given to a project's own helper is its business. With `report_unknown`, a value
porter cannot read (`load_in_8bit=load_8bit`, a parameter) is reported too: if it is true
at run time, the same applies.

`also_keywords` are other names of the same setting (Ray's `num_gpus=1` and a resource
dictionary's `{"GPU": 1}`); `unless_values` are literal values with which the setting asks for
nothing (`num_gpus=0`); with `when_importing`, the rule reads only modules that import one of
those packages: `{"GPU": 1}` is a Ray resource request in a module that imports ray, and a
dictionary of the project's own anywhere else.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from typing import Any

from porter.core.model import Finding
from porter.python.context import FileContext
from porter.rules import Rule
from porter.rules.kinds import KeywordValueParams
from porter.python.kinds.base import PythonKind


def _keywords(rule: Rule) -> list[str]:
    return [KeywordValueParams.of(rule).keyword, *KeywordValueParams.of(rule).also_keywords]


def screen_words(rules: list[Rule]) -> set[str]:
    return {k for r in rules for k in _keywords(r)}


def find(ctx: FileContext, rules: list[Rule]) -> Iterable[Finding]:
    by_keyword: dict[str, list[Rule]] = {}
    for rule in rules:
        if _imports_any(ctx, KeywordValueParams.of(rule).when_importing):
            for keyword in _keywords(rule):
                by_keyword.setdefault(keyword, []).append(rule)
    for where, name, value in _settings(ctx):
        for rule in by_keyword.get(name, ()):
            if not _in_wanted_call(ctx, where, KeywordValueParams.of(rule).calls):
                continue
            if _is_one_of(value, KeywordValueParams.of(rule).unless_values):
                continue
            values = KeywordValueParams.of(rule).values
            constant = value if isinstance(value, ast.Constant) else None
            unknown = constant is None
            if (
                values is not None
                and not (unknown and KeywordValueParams.of(rule).report_unknown)
                and not (
                    constant is not None
                    and constant.value in values
                    and type(constant.value) in {type(v) for v in values}
                )
            ):
                continue
            node = where
            shown = ctx.text[slice(*ctx.span(node))]
            new = KeywordValueParams.of(rule).replace
            if unknown and values is not None and KeywordValueParams.of(rule).report_unknown:
                yield ctx.finding(
                    rule,
                    node,
                    subject=shown,
                    severity="warning",
                    message=f"{shown}: if it is {values[0]!r} at run time: {rule.message or rule.summary}",
                )
            elif new is None:
                yield ctx.finding(rule, node, subject=shown)
            else:
                yield ctx.finding(rule, value, f"{shown} -> {name}={new}", replacement=new, subject=shown)


def _imports_any(ctx: FileContext, packages: Sequence[str]) -> bool:
    """Whether the module imports one of `packages` (anywhere in it); always without them."""
    if not packages:
        return True
    return any(qual.split(".", 1)[0] in packages for qual in ctx.imports.bindings.values())


def _is_one_of(value: ast.AST, literals: Sequence[Any]) -> bool:
    """Whether `value` is a literal equal to one of `literals` (a bool only to a bool: 0 is not
    False here, as in `values`; 0.0 is 0)."""
    if not literals or not isinstance(value, ast.Constant):
        return False
    return any(value.value == v and isinstance(value.value, bool) == isinstance(v, bool) for v in literals)


def _in_wanted_call(ctx: FileContext, where: ast.AST, calls: Sequence[str]) -> bool:
    """Whether a setting counts: always without `calls`, and for dictionaries being built
    (`{...}`, `dict(...)`, `kw[...] = `: their call is not known); a call keyword only in a
    call named in `calls`."""
    if not calls or not isinstance(where, ast.keyword):
        return True
    call = ctx.parents.get(where)
    if not isinstance(call, ast.Call):
        return True
    func = call.func
    last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    resolved = ctx.imports.resolve(func) or ""
    return last in calls or last == "dict" or resolved.split(".", 1)[0] in calls  # dict(...): kwargs being built


def _settings(ctx: FileContext) -> Iterable[tuple[ast.AST, str, ast.expr]]:
    """(node to report at, setting name, value node) for each way of writing a setting."""
    for keyword in ctx.own_nodes(ast.keyword):
        if keyword.arg:
            yield keyword, keyword.arg, keyword.value
    for table in ctx.own_nodes(ast.Dict):
        for key, value in zip(table.keys, table.values):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                yield key, key.value, value
    for assign in ctx.own_nodes(ast.Assign):
        for target in assign.targets:
            if (
                isinstance(target, ast.Subscript)
                and isinstance(target.slice, ast.Constant)
                and isinstance(target.slice.value, str)
            ):
                yield assign, target.slice.value, assign.value


KIND = PythonKind("keyword-value", screen=screen_words, find=find)
