"""Kind `method`: a tensor/module method or attribute by name (`.cuda()` -> `.mlu()`, `.is_cuda`).

Only receivers that are values count: `torch.cuda` is a namespace (handled by
`qualified-name`) and `nn.Module.cuda` an API reference, never a method use; an imported
object of the user's (`from nets import encoder; encoder.cuda()`) is a value.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from porter.core.model import Finding
from porter.python.context import FileContext
from porter.rules import Rule
from porter.rules.kinds import MethodParams
from porter.python.kinds.base import PythonKind


def screen_words(rules: list[Rule]) -> set[str]:
    return {MethodParams.of(r).attribute for r in rules}


def find(ctx: FileContext, rules: list[Rule]) -> Iterable[Finding]:
    by_attr = {MethodParams.of(r).attribute: r for r in rules}
    for node in ctx.own_nodes(ast.Attribute):
        rule = by_attr.get(node.attr)
        if rule is None:
            continue
        receiver = ctx.imports.resolve(node.value)
        if receiver is not None and (receiver == "torch" or receiver.startswith("torch.")):
            continue  # torch.cuda, nn.Module.cuda: namespaces and API references, not method calls
        parent = ctx.parents.get(node)
        is_call = isinstance(parent, ast.Call) and parent.func is node
        if MethodParams.of(rule).called != is_call:
            continue
        new = MethodParams.of(rule).replace
        if new is None:
            yield ctx.finding(rule, node, subject=f".{node.attr}")
            continue
        end = ctx.span(node)[1]
        yield ctx.finding(
            rule,
            (end - len(node.attr), end),
            f".{node.attr} -> .{new}",
            replacement=new,
            subject=f".{node.attr}",
            expect_old=node.attr,
        )


KIND = PythonKind("method", screen=screen_words, find=find)
