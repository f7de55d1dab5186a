"""Literals that reach a call into another stack through a variable of the same function.

`L.Fabric(accelerator="cuda")` hands the literal to Lightning directly, and the string-literal
kind keeps it (`report_in_modules`). Real code more often names the setting first and checks
it on the way (litgpt's `LLM.distribute`):

    allowed = {"cpu", "cuda", "auto"}
    if accelerator not in allowed: raise ValueError(...)
    if accelerator == "auto":
        accelerator = "cuda" if torch.cuda.is_available() else "cpu"
    fabric = L.Fabric(accelerator=accelerator)

Every literal there is one of Lightning's accelerator names, not a torch device: the value
assigned to the variable, its parameter default and `Literal[...]` annotation, what it is
compared with, and the names of a collection it is tested against (`accelerator not in
allowed`). Renamed to "mlu", the accepted names refuse "cuda" and Fabric is handed a name it
does not know.

A variable is followed only when it is a setting of that stack: every read of it in its
function is an argument of a call into one of the modules, an operand of a comparison, a
part of an f-string or of a `raise` statement (a message). A variable that is also handed to torch (`x.to(device)`)
is a torch device as well, and is converted as before.
"""

from __future__ import annotations

import ast

from porter.python.bindings import enclosing_scope, scope_bindings
from porter.python.context import FileContext

_COLLECTIONS = (ast.Tuple, ast.List, ast.Set)


def reaching(ctx: FileContext, modules: tuple[str, ...]) -> dict[int, tuple[str, str, int]]:
    """id(string literal) -> (variable, callee, line of the call) for each literal of the
    file that reaches a call into `modules` through a variable (see the module docstring)."""
    key = ("foreign-flow", modules)
    made = ctx.derived.get(key)
    if made is None:
        made = ctx.derived[key] = _reaching(ctx, modules) if modules else {}
    assert isinstance(made, dict)  # (the store holds anything; under this key, _reaching's answer)
    return made


def _reaching(ctx: FileContext, modules: tuple[str, ...]) -> dict[int, tuple[str, str, int]]:
    if not any(q.split(".", 1)[0] in modules for q in ctx.imports.bindings.values()):
        return {}
    given: dict[tuple[int, str], tuple[str, int]] = {}  # (scope, variable) -> (callee, line)
    foreign_calls: set[int] = set()
    for node, qual in ctx.import_chains_into(frozenset(modules)):
        call = ctx.parents.get(node)
        if not (isinstance(call, ast.Call) and call.func is node and qual.split(".", 1)[0] in modules):
            continue
        foreign_calls.add(id(call))
        for value in [*call.args, *(k.value for k in call.keywords)]:
            if isinstance(value, ast.Name):
                given.setdefault((id(_owner(ctx, value)), value.id), (qual, call.lineno))
    if not given:
        return {}
    names = {name for _, name in given}
    reads: dict[tuple[int, str], list[ast.Name]] = {}
    scopes: dict[int, ast.AST] = {}
    for node in ctx.nodes(ast.Name):
        if node.id not in names or not isinstance(node.ctx, ast.Load):
            continue
        scope = _owner(ctx, node)
        if (id(scope), node.id) in given:
            scopes[id(scope)] = scope
            reads.setdefault((id(scope), node.id), []).append(node)
    out: dict[int, tuple[str, str, int]] = {}
    for (scope_id, name), uses in reads.items():
        if not all(_setting_use(ctx, use, foreign_calls) for use in uses):
            continue  # also a torch device, or something porter cannot follow
        callee, line = given[(scope_id, name)]
        bindings = scope_bindings(ctx, scopes[scope_id])
        literals: list[ast.AST] = []
        for value in bindings.get(name, ()):
            literals += _bound_literals(ctx, value)
        for use in uses:
            compare = ctx.parents.get(use)
            if isinstance(compare, ast.Compare):
                for other in (compare.left, *compare.comparators):
                    if other is not use:
                        literals += _compared_literals(ctx, other, bindings)
        for literal in literals:
            if isinstance(literal, ast.Constant) and isinstance(literal.value, str):
                out.setdefault(id(literal), (name, callee, line))
    return out


def _owner(ctx: FileContext, name: ast.Name) -> ast.AST:
    """The scope whose variable `name` reads: its function's when the function binds it, else
    the module's (a function reading a module-level setting is one of its readers too)."""
    scope = enclosing_scope(ctx, name)
    return scope if name.id in scope_bindings(ctx, scope) else ctx.tree


def _setting_use(ctx: FileContext, use: ast.Name, foreign_calls: set[int]) -> bool:
    parent = ctx.parents.get(use)
    call = ctx.parents.get(parent) if isinstance(parent, ast.keyword) else parent
    if isinstance(call, ast.Call) and id(call) in foreign_calls and call.func is not use:
        return True
    if isinstance(parent, (ast.Compare, ast.FormattedValue)):
        return True
    while parent is not None and not isinstance(parent, ast.stmt):
        parent = ctx.parents.get(parent)
    return isinstance(parent, ast.Raise)  # named in an error (`raise ValueError(accelerator)`)


def _bound_literals(ctx: FileContext, value: object) -> list[ast.AST]:
    """The literals a binding of the variable may give it: `x = "a"`, `x = "a" if c else "b"`,
    `x: T = "a"`, and for a parameter its default and the literals of its annotation
    (`Literal["cpu", "cuda"]`)."""
    if isinstance(value, ast.AnnAssign):
        value = value.value
    if isinstance(value, ast.arg):
        arguments = ctx.parents.get(value)
        found = [n for n in ast.walk(value.annotation)] if value.annotation is not None else []
        if isinstance(arguments, ast.arguments):
            positional = [*arguments.posonlyargs, *arguments.args]
            pairs: list[tuple[ast.arg, ast.expr | None]]  # (kw_defaults: None for a parameter without one)
            pairs = list(zip(positional[len(positional) - len(arguments.defaults) :], arguments.defaults))
            pairs += list(zip(arguments.kwonlyargs, arguments.kw_defaults))
            found += [d for a, d in pairs if a is value and d is not None]
        return [n for n in found if isinstance(n, ast.Constant)]
    out: list[ast.AST] = []
    while isinstance(value, ast.IfExp):
        out.append(value.body)
        value = value.orelse
    if isinstance(value, ast.AST):
        out.append(value)
    return out


def _compared_literals(ctx: FileContext, other: ast.AST, bindings: dict[str, list]) -> list[ast.AST]:
    """What the variable is compared with: a literal, the literals of a collection (`x in
    ("cuda", "gpu")`), or those of a variable that only ever holds a collection of literals
    (`allowed = {"cpu", "cuda"}` ... `x not in allowed`; the function's own, else the module's)."""
    if isinstance(other, ast.Constant):
        return [other]
    if isinstance(other, _COLLECTIONS):
        return list(other.elts)
    if isinstance(other, ast.Name):
        values = bindings.get(other.id) or scope_bindings(ctx, ctx.tree).get(other.id) or []
        if values and all(
            isinstance(v, _COLLECTIONS) and all(isinstance(e, ast.Constant) for e in v.elts) for v in values
        ):
            return [e for v in values for e in v.elts]
    return []
