"""What device-guard looks for in a file's tree: CUDA checks, the `if` chains they test,
other devices' branches and CUDA-only code.

Pure questions about an ast; device_guard.py decides what to do with the answers.
"""

from __future__ import annotations

import ast

from porter.core.model import Finding
from porter.python.context import FileContext
from porter.rules import Rule

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


def checked_choices(ctx: FileContext, rule: Rule) -> list[ast.IfExp]:
    """The conditional expressions whose test calls a check (`"cuda" if cuda_ok() else "cpu"`)."""
    return [n for n in ctx.nodes(ast.IfExp) if any(is_check(ctx, c, rule) for c in ast.walk(n.test))]


class KeptValues:
    """The string literals a rule reports without an edit (a value porter keeps on purpose,
    such as "cuda" given to Lightning's Fabric through a variable), by where they start."""

    def __init__(self, ctx: FileContext, findings: list[Finding]) -> None:
        self.ctx = ctx
        self.reported: dict[tuple[int, int], Finding] = {}
        for f in findings:
            if f.edit is None:
                self.reported.setdefault((f.line, f.col), f)

    def literal(self, node: ast.AST) -> tuple[ast.AST, Finding] | None:
        if not (self.reported and isinstance(node, ast.Constant) and isinstance(node.value, str)):
            return None
        found = self.reported.get(self.ctx.index.line_col(self.ctx.span(node)[0]))
        return (node, found) if found is not None else None

    def choice(self, node: ast.AST) -> tuple[ast.AST, Finding] | None:
        """A kept literal among the values `node` may be (the arms of `a if c else b`)."""
        while isinstance(node, ast.IfExp):
            found = self.literal(node.body)
            if found is not None:
                return found
            node = node.orelse
        return self.literal(node)

    def __call__(self, body: list[ast.stmt]) -> tuple[ast.AST, Finding] | None:
        """A kept literal that a statement of `body` assigns (`accelerator = "cuda"`)."""
        for stmt in body:
            value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
            found = self.choice(value) if value is not None else None
            if found is not None:
                return found
        return None
