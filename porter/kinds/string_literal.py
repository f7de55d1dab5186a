"""Kind `string-literal`: a whole string literal that names a device or backend.

`values` maps whole literals (`"cuda"` -> `"mlu"`, `"nccl"` -> `"cncl"`); `prefixes` maps a
literal's start, which also covers f-strings, `.format` and `+` building (`"cuda:{}"`,
`f"cuda:{rank}"`, `"cuda:" + str(i)`); `flag` lists literals that are only reported.
A literal is left alone where it is text or data rather than a device (DESIGN.md,
precision principle 2): docstrings and bare string statements, dictionary keys and
subscripts (`rng_state["cuda"]` is checkpoint data), and arguments of calls named in
`keep_in_calls` (kernel registries keyed on the CUDA device type). Triton modules, whose
"cuda" is a backend name, are kept whole by the `device-guard` kind.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from porter.kinds.literal_text import literal_body
from porter.model import Finding
from porter.pycontext import FileContext
from porter.rules import Rule

REQUIRED: dict[str, type] = {}
OPTIONAL: dict[str, type] = {
    "values": dict,
    "prefixes": dict,
    "flag": list,
    "keep_in_calls": list,
}


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


def check(ctx: FileContext, rules: list[Rule]) -> Iterable[Finding]:
    for rule in rules:
        values: dict[str, str] = rule.params.get("values", {})
        prefixes: dict[str, str] = rule.params.get("prefixes", {})
        flag = set(rule.params.get("flag", ()))
        for node in ctx.nodes(ast.Constant):
            value = node.value
            if not isinstance(value, str) or not (value in values or value in flag or value.startswith(tuple(prefixes))):
                continue
            if ctx.inside_fstring(node) or _kept_context(ctx, node, rule):
                continue
            if value in flag:
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
            yield ctx.finding(rule, (s, s + len(old)), f'"{old}" -> "{new}"', replacement=new, subject=old)
            return
