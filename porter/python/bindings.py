"""Which names each scope of a file binds, and to what: the raw material for receiver reading.

A scope is a function, a lambda or the module. One pass over the binding statements the
file context already grouped by type, each placed in its scope by climbing parents, so
no scope is walked again. Comprehension variables are counted in the enclosing scope,
which can only make a same-named variable less certain, never wrong.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from porter.python.context import FileContext

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_UNFOLLOWED = (ast.For, ast.AsyncFor, ast.comprehension, ast.withitem)

# scope id -> name -> what each binding assigns: an expression, an ast.arg, an AnnAssign,
# or None for a binding the reading cannot follow (loops, with, unpacking, def, class).
Bindings = dict[int, dict[str, list]]


def enclosing_scope(ctx: FileContext, node: ast.AST) -> ast.AST:
    """The function, lambda or module whose scope `node` is evaluated in."""
    return _scope(ctx.parents, node) or ctx.tree


def _scope(parents: dict[ast.AST, ast.AST], node: ast.AST) -> ast.AST | None:
    parent = parents.get(node)
    while parent is not None and not isinstance(parent, SCOPES):
        parent = parents.get(parent)
    return parent


def scope_bindings(ctx: FileContext, scope: ast.AST) -> dict[str, list]:
    """The bindings of one scope (`file_bindings`), made once per file for all its readers."""
    made = ctx.derived.get("bindings")
    if made is None:
        made = ctx.derived["bindings"] = file_bindings(ctx)
    assert isinstance(made, dict)  # (the store holds anything; under this key, file_bindings' answer)
    return made.get(id(scope), {})


def file_bindings(ctx: FileContext) -> Bindings:
    """Every binding of the file, by scope (in a module analysed in groups: of the group's own
    statements, and what the others bind in the module's scope, made once by `ctx.rest`)."""
    out = bindings_of(ctx.own_nodes, ctx.parents, ctx.tree)
    if ctx.rest is not None:
        out[id(ctx.tree)] = _ModuleScope(out.get(id(ctx.tree), {}), ctx.rest.module_bindings(ctx))
    return out


class _ModuleScope(dict):
    """The module's scope in a group of a module analysed in groups: the group's own bindings,
    then the other groups' (`rest`, a list of their bindings), joined per name when it is read
    (a group reads a few names of the module; joining them all, per group, cost more)."""

    def __init__(self, own: dict[str, list], rest: list[dict[str, list]]) -> None:
        super().__init__(own)
        self.rest = rest

    def get(self, name: str, default: Any = None) -> Any:
        values = [*super().get(name, ()), *(v for part in self.rest for v in part.get(name, ()))]
        return values if values or name in self or any(name in part for part in self.rest) else default

    def __contains__(self, name: object) -> bool:
        return super().__contains__(name) or any(name in part for part in self.rest)


def bindings_of(nodes: Callable[..., list[Any]], parents: dict[ast.AST, ast.AST], module: ast.AST) -> Bindings:
    """The bindings of the nodes `nodes(*types)` gives, by scope (`module`: the module's)."""
    out: Bindings = {}
    for fn in nodes(*_FUNCTIONS):
        a = fn.args
        names = out.setdefault(id(fn), {})
        for arg in a.posonlyargs + a.args + a.kwonlyargs:
            names.setdefault(arg.arg, []).append(arg)
        for star in (a.vararg, a.kwarg):
            if star is not None:
                names.setdefault(star.arg, []).append(None)
    for node in nodes(
        ast.Assign, ast.AnnAssign, ast.NamedExpr, *_UNFOLLOWED, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef
    ):
        scope = _scope(parents, node)
        # (any module is `module`: a group of a large module reads its skeleton's parents,
        # porter/python/grouped.py, whose top-level statements' parent is the current group's)
        names = out.setdefault(id(module if scope is None or isinstance(scope, ast.Module) else scope), {})
        if isinstance(node, ast.Assign):
            for target in node.targets:
                _bind(names, target, node.value)
        elif isinstance(node, ast.AnnAssign):
            if isinstance(node.target, ast.Name):
                names.setdefault(node.target.id, []).append(node)
        elif isinstance(node, ast.NamedExpr):
            _bind(names, node.target, node.value)
        elif isinstance(node, ast.withitem):
            if node.optional_vars is not None:
                _bind(names, node.optional_vars, None)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):  # (withitem is above)
            _bind(names, node.target, None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):  # all that is left
            names.setdefault(node.name, []).append(None)
    return out


def _bind(names: dict[str, list], target: ast.AST, value: ast.AST | None) -> None:
    if isinstance(target, ast.Name):
        names.setdefault(target.id, []).append(value)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            _bind(names, element.value if isinstance(element, ast.Starred) else element, None)
