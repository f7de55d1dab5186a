"""What a test's mock patches, by qualified name.

A mock names its target in one of two ways: a dotted string (`patch("torch.cuda.is_available")`,
`mocker.patch(...)`, `monkeypatch.setattr("torch.cuda.set_device", f)`), or an object and the
name of its member (`patch.object(torch.cuda, "is_available")`, `monkeypatch.setattr(torch.cuda,
"is_available", f)`). Ported code calls `torch.mlu.is_available`; a mock left on
`torch.cuda.is_available` then patches something the code no longer reaches, and the test
asserts on behaviour it never set up. The qualified-name kind renames the target as it renames
the code (porter/python/kinds/qualified_name.py).

Only the patchers of unittest.mock (and its `mock` backport) resolve through imports; pytest's
`monkeypatch` and pytest-mock's `mocker` are fixtures, known by their conventional parameter names.
"""

from __future__ import annotations

import ast

from porter.python.context import FileContext, StrConstant, is_str_constant

_STRING_PATCHERS = {"unittest.mock.patch", "mock.patch"}
_OBJECT_PATCHERS = {"unittest.mock.patch.object", "mock.patch.object"}
# (fixture, method): the fixture's methods that take a dotted string or an object and a name.
_FIXTURE_STRING = {("mocker", "patch"), ("monkeypatch", "setattr"), ("monkeypatch", "delattr")}
_FIXTURE_OBJECT = {("mocker.patch", "object"), ("monkeypatch", "setattr"), ("monkeypatch", "delattr")}


def _fixture_method(func: ast.AST) -> tuple[str, str] | None:
    """(`monkeypatch`, `setattr`) for `monkeypatch.setattr`, (`mocker.patch`, `object`) for
    `mocker.patch.object`: a method of a fixture that is not imported."""
    if not isinstance(func, ast.Attribute):
        return None
    owner = func.value
    if isinstance(owner, ast.Name):
        return owner.id, func.attr
    if isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name):
        return f"{owner.value.id}.{owner.attr}", func.attr
    return None


def _first_argument(call: ast.Call) -> ast.AST | None:
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "target"), None)


def string_targets(ctx: FileContext) -> list[StrConstant]:
    """The dotted strings that name what a mock patches (`"torch.cuda.is_available"`)."""
    out: list[StrConstant] = []
    for call in ctx.own_nodes(ast.Call):
        target = _first_argument(call)
        if not is_str_constant(target) or "." not in target.value:
            continue
        if ctx.imports.resolve(call.func) in _STRING_PATCHERS or _fixture_method(call.func) in _FIXTURE_STRING:
            out.append(target)
    return out


def _object_patch(ctx: FileContext, call: ast.AST | None) -> StrConstant | None:
    """The member's name of a mock by object and name (`"is_available"` of `patch.object(torch.cuda,
    "is_available")`), else None."""
    if (
        not isinstance(call, ast.Call)
        or len(call.args) < 2
        or is_str_constant(call.args[0])
        or not is_str_constant(call.args[1])
    ):
        return None
    if ctx.imports.resolve(call.func) in _OBJECT_PATCHERS or _fixture_method(call.func) in _FIXTURE_OBJECT:
        return call.args[1]
    return None


def patched_member(ctx: FileContext, node: ast.AST) -> StrConstant | None:
    """The member's name when `node` is the object a mock patches a member of (`torch.cuda` in
    `patch.object(torch.cuda, "is_available")`), else None."""
    call = ctx.parents.get(node)
    return _object_patch(ctx, call) if isinstance(call, ast.Call) and call.args and call.args[0] is node else None


def is_member_name(ctx: FileContext, node: ast.AST) -> bool:
    """Whether `node` is the name of the member a mock patches (`"cuda"` of
    `monkeypatch.setattr(torch.version, "cuda", "12.1")`): an attribute's name, not a value."""
    return _object_patch(ctx, ctx.parents.get(node)) is node
