"""Kind `string-literal`: a whole string literal that names a device or backend.

`values` maps whole literals (`"cuda"` -> `"mlu"`, `"nccl"` -> `"cncl"`); `prefixes` maps a
literal's start, which also covers f-strings, `.format` and `+` building (`"cuda:{}"`,
`f"cuda:{rank}"`, `"cuda:" + str(i)`); `flag` lists literals that are only reported.
A literal is left alone where it is text or data rather than a device (README: comments,
docstrings, messages and data are never touched): docstrings and bare string statements, dictionary keys and
subscripts (`rng_state["cuda"]` is checkpoint data), and arguments of calls named in
`keep_in_calls` (kernel registries keyed on the CUDA device type). Triton modules, whose
"cuda" is a backend name, are kept whole by the `device-guard` kind.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from porter.python.kinds.literal_text import literal_body
from porter.core.model import Finding
from porter.python.context import FileContext
from porter.rules import Rule



def screen_words(rules: list[Rule]) -> set[str]:
    words: set[str] = set()
    for r in rules:
        words |= set(r.params.get("values", {})) | set(r.params.get("flag", []))
        words |= {p.rstrip(":") for p in r.params.get("prefixes", {})}
    return words


def _kept_context(ctx: FileContext, node: ast.AST, rule: Rule) -> bool:
    parent = ctx.parents.get(node)
    if isinstance(parent, ast.Expr):
        return True
    if isinstance(parent, ast.Subscript) and parent.slice is node:
        return True
    if isinstance(parent, ast.Dict) and any(k is node for k in parent.keys):
        return True
    if _is_key_lookup(ctx, node, parent):
        return True
    keep_calls = rule.params.get("keep_in_calls")
    if keep_calls:
        call = parent.func if isinstance(parent, ast.Call) else None
        if call is None and isinstance(parent, ast.keyword):
            grand = ctx.parents.get(parent)
            call = grand.func if isinstance(grand, ast.Call) else None
        if call is not None:
            name = call.attr if isinstance(call, ast.Attribute) else getattr(call, "id", None)
            if name in keep_calls:
                return True
    return False


_KEY_METHODS = {"get", "pop", "setdefault", "__getitem__", "__contains__"}


def _is_key_lookup(ctx: FileContext, node: ast.AST, parent: ast.AST | None) -> bool:
    """`state.get("cuda")` or `"cuda" in state`: the literal is a key of some mapping (data).

    `"cuda" in str(x.device)` and `"cuda" in device_name` test a device and are not kept:
    a membership test is data only when its right side is neither a `str(...)` call nor
    something named like a device.
    """
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node:
        func = parent.func
        return isinstance(func, ast.Attribute) and func.attr in _KEY_METHODS
    if isinstance(parent, ast.Compare) and parent.left is node and all(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops):
        right = parent.comparators[0]
        if isinstance(right, ast.Call) and isinstance(right.func, ast.Name) and right.func.id == "str":
            return False
        return "device" not in ctx.text[slice(*ctx.span(right))].lower()
    return False


def _flagged(value: str, flag: set[str]) -> bool:
    """A flagged literal, or a command line that starts with one (`"nvidia-smi -L"`)."""
    return value in flag or value.split(" ", 1)[0] in flag


def check(ctx: FileContext, rules: list[Rule]) -> Iterable[Finding]:
    for rule in rules:
        values: dict[str, str] = rule.params.get("values", {})
        prefixes: dict[str, str] = rule.params.get("prefixes", {})
        flag = set(rule.params.get("flag", ()))
        starts = tuple(prefixes)
        for node in ctx.nodes(ast.Constant):
            value = node.value
            if type(value) is not str or not (value in values or _flagged(value, flag) or value.startswith(starts)):
                continue
            if _kept_context(ctx, node, rule):
                continue
            if isinstance(ctx.parents.get(node), ast.JoinedStr):
                if _flagged(value, flag) and ctx.parents[node].values[0] is node:
                    yield ctx.finding(rule, ctx.parents[node], subject=value.split(" ", 1)[0])
                continue  # literal parts of an f-string: handled with the whole f-string below
            if _flagged(value, flag):
                yield ctx.finding(rule, node, subject=value)
                continue
            yield from _rewrite(ctx, rule, node, values, prefixes)
        if prefixes:
            for node in ctx.nodes(ast.JoinedStr):
                first = node.values[0] if node.values else None
                if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                    continue
                if not first.value.startswith(tuple(prefixes)) or _kept_context(ctx, node, rule):
                    continue
                yield from _rewrite(ctx, rule, node, {}, prefixes)


def _rewrite(ctx: FileContext, rule: Rule, node: ast.AST, values: dict, prefixes: dict) -> Iterable[Finding]:
    start, end = ctx.span(node)
    source = ctx.text[start:end]
    body = literal_body(source)
    if body is None:
        yield ctx.finding(rule, node, "device string built in a way porter cannot rewrite; change it by hand", severity="warning")
        return
    text = source[body[0]:body[1]]
    for old, new in list(values.items()) + list(prefixes.items()):
        exact = old in values
        if (exact and text == old) or (not exact and text.startswith(old)):
            s = start + body[0]
            yield ctx.finding(rule, (s, s + len(old)), f'"{old}" -> "{new}"', replacement=new, subject=old, expect_old=old)
            return
