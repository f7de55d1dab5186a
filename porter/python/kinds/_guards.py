"""What device-guard looks for in a file's tree: CUDA checks, the `if` chains they test,
other devices' branches, CUDA-only code, and GPU kernel languages imported at top level.

Pure questions about an ast; device_guard.py decides what to do with the answers.
"""

from __future__ import annotations

import ast

from porter.python.context import FileContext
from porter.rules import Rule

_KERNEL_DECORATORS = ("jit", "autotune", "heuristics")


def call_name(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def is_check(ctx: FileContext, node: ast.AST, rule: Rule) -> bool:
    if not isinstance(node, ast.Call):
        return False
    checks = rule.params["checks"]
    qual = ctx.imports.resolve(node.func)
    if qual is not None and qual in checks:
        return True
    name = call_name(node)
    return name is not None and name in checks  # bare names: local helpers of that name


def mentions(ctx: FileContext, root: ast.AST, rule: Rule, words: list[str], modules: list[str]) -> bool:
    for node in ast.walk(root):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in words:
            return True
        if isinstance(node, (ast.Name, ast.Attribute)):
            qual = ctx.imports.resolve(node)
            if qual and qual.split(".", 1)[0] in modules:
                return True
        if isinstance(node, ast.Import) and any(a.name.split(".", 1)[0] in modules for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".", 1)[0] in modules:
            return True
    return False


def other_device(test: ast.AST, devices: list[str]) -> bool:
    for node in ast.walk(test):
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
        if name and any(d in name.lower().split("_") or name.lower() == d for d in devices):
            return True
    return False


def imported_from_torch(ctx: FileContext, test: ast.AST, rule: Rule) -> bool:
    """The test calls a check imported by name from torch (`from torch.cuda import
    is_available as cuda_ok`). The namespace rule ports that import, so after the port the
    name tests the target: the branch cannot be kept as the CUDA one, it is ported in place."""
    for node in ast.walk(test):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and is_check(ctx, node, rule):
            if ctx.imports.bindings.get(node.func.id, "").startswith("torch."):
                return True
    return False


def negated_check(ctx: FileContext, test: ast.AST, rule: Rule) -> bool:
    return any(isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) and is_check(ctx, n.operand, rule) for n in ast.walk(test))


def checked_ifs(ctx: FileContext, rule: Rule) -> set[int]:
    """Ids of the `if` statements whose test calls a check: found from the check calls up,
    as a file has far fewer calls named like a check than `if` statements."""
    names = {c.rsplit(".", 1)[-1] for c in rule.params["checks"]}
    bound = ctx.imports.bindings  # `from torch.cuda import is_available as avail`: any name
    found: set[int] = set()
    for call in ctx.nodes(ast.Call):
        name = call_name(call)
        if name not in names and not (isinstance(call.func, ast.Name) and name in bound):
            continue
        if not is_check(ctx, call, rule):
            continue
        child, parent = call, ctx.parents.get(call)
        while parent is not None and not isinstance(child, ast.stmt):
            if isinstance(parent, ast.If) and parent.test is child:
                found.add(id(parent))
                break
            child, parent = parent, ctx.parents.get(parent)
    return found


def chain(node: ast.If) -> list[ast.If]:
    """The branches of an if/elif chain; an `else:` that holds only an `if` continues it."""
    branches = [node]
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        node = node.orelse[0]
        branches.append(node)
    return branches


def is_elif(ctx: FileContext, branch: ast.If) -> bool:
    return ctx.text.startswith("elif", ctx.span(branch)[0])


def monkey_patch(ctx: FileContext, modules: list[str]) -> tuple[ast.AST, str] | None:
    """The import that makes this a monkey patch built on one of `modules` (flash-attn): the
    module imports it unconditionally and swaps one of its own functions or classes into a
    module it imports (`transformers.models.llama.modeling_llama.LlamaAttention.forward =
    forward`). A module that only uses such a library (its padding helpers), or that patches
    in another library's name, is not one: it is ported, and the import reported."""
    # A patch module's `try: import xformers ... except ImportError: log` still patches with
    # it: the import counts in any top-level `try:`.
    found = top_level_import(ctx, modules, optional_in_try=False) if modules else None
    if found is None:
        return None
    own = {f.name for f in ctx.tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    for assign in ctx.nodes(ast.Assign):
        swapped_in = isinstance(assign.value, ast.Name) and assign.value.id in own
        if swapped_in and any(isinstance(t, ast.Attribute) and ctx.imports.resolve(t.value) for t in assign.targets):
            return found
    return None


def top_level_import(ctx: FileContext, modules: list[str], optional_in_try: bool = True) -> tuple[ast.AST, str] | None:
    """The import that makes this a kernel module, if it is one.

    A module is a kernel module when it imports a kernel language unconditionally (module
    body, or a top-level `try:` whose handlers raise) or when it defines kernels
    (`@triton.jit`, `@triton.autotune`). An import under `if cuda_available:`, or in a `try:`
    whose handlers carry on without it (`except ImportError: pass`, a flag set to False), is
    optional: the module runs without that stack, so it is ported.
    """
    stack = list(ctx.tree.body)
    while stack:
        stmt = stack.pop(0)
        if isinstance(stmt, ast.Try):
            if not (optional_in_try and _carries_on_without(stmt)):
                stack[:0] = stmt.body
            continue
        if isinstance(stmt, ast.Import):
            names = [a.name for a in stmt.names]
        elif isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
            # `from numba import cuda` imports numba.cuda, which a dotted entry names.
            names = [stmt.module, *(f"{stmt.module}.{a.name}" for a in stmt.names)]
        else:
            names = []
        for name in names:
            module = _listed(name, modules)
            if module is not None:
                return stmt, module
    for fn in ctx.nodes(ast.FunctionDef):
        for deco in fn.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            qual = ctx.imports.resolve(target) or ""
            module = _listed(qual.rpartition(".")[0], modules)
            if module is not None and qual.rsplit(".", 1)[-1] in _KERNEL_DECORATORS:
                return deco, module
    return None


def _listed(name: str, modules: list[str]) -> str | None:
    """The entry of `modules` that `name` is or lies under (`triton.language` under triton,
    `numba.cuda` itself; `numba` alone is not under `numba.cuda`)."""
    for module in modules:
        if name == module or name.startswith(module + "."):
            return module
    return None


def _carries_on_without(stmt: ast.Try) -> bool:
    """Whether a `try:` has handlers and none of them raises: what it imports is optional."""
    return bool(stmt.handlers) and not any(isinstance(n, ast.Raise) for h in stmt.handlers for n in ast.walk(h))
