"""What device-guard looks for in a file's tree: CUDA checks, the `if` chains they test,
other devices' branches and CUDA-only code.

Pure questions about an ast; device_guard.py decides what to do with the answers.
"""

from __future__ import annotations

from collections.abc import Sequence
import ast

from porter.core.model import Finding
from porter.python.context import FileContext, is_str_constant
from porter.rules import Rule
from porter.rules.kinds import DeviceGuardParams


def call_name(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def is_check(ctx: FileContext, node: ast.AST, rule: Rule) -> bool:
    if not isinstance(node, ast.Call):
        return False
    checks = DeviceGuardParams.of(rule).checks
    qual = ctx.imports.resolve(node.func)
    if qual is not None and qual in checks:
        return True
    name = call_name(node)
    return name is not None and name in checks  # bare names: local helpers of that name


def mentions(ctx: FileContext, root: ast.AST, rule: Rule, words: Sequence[str], modules: Sequence[str]) -> bool:
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


def other_device(test: ast.AST, devices: Sequence[str]) -> bool:
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
    return any(
        isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) and is_check(ctx, n.operand, rule)
        for n in ast.walk(test)
    )


def checked_ifs(ctx: FileContext, rule: Rule) -> set[int]:
    """Ids of the `if` statements whose test calls a check: found from the check calls up,
    as a file has far fewer calls named like a check than `if` statements."""
    names = {c.rsplit(".", 1)[-1] for c in DeviceGuardParams.of(rule).checks}
    bound = ctx.imports.bindings  # `from torch.cuda import is_available as avail`: any name
    found: set[int] = set()
    for call in ctx.own_nodes(ast.Call):
        name = call_name(call)
        if name not in names and not (isinstance(call.func, ast.Name) and name in bound):
            continue
        if not is_check(ctx, call, rule):
            continue
        child: ast.AST = call  # climbing: the check call, then what holds it
        parent = ctx.parents.get(call)
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
    return [n for n in ctx.own_nodes(ast.IfExp) if any(is_check(ctx, c, rule) for c in ast.walk(n.test))]


class KeptValues:
    """The string literals a rule reports without an edit (a value porter keeps on purpose,
    such as "cuda" given to Lightning's Fabric through a variable), by where they start."""

    def __init__(self, ctx: FileContext, findings: list[Finding]) -> None:
        self.ctx = ctx
        self.reported: dict[tuple[int, int], Finding] = {}
        for f in findings:
            if f.edit is None:
                self.reported.setdefault((f.line, f.col), f)

    def literal(self, node: ast.AST) -> tuple[ast.Constant, Finding] | None:
        if not (self.reported and isinstance(node, ast.Constant) and isinstance(node.value, str)):
            return None
        found = self.reported.get(self.ctx.index.line_col(self.ctx.span(node)[0]))
        return (node, found) if found is not None else None

    def choice(self, node: ast.AST) -> tuple[ast.Constant, Finding] | None:
        """A kept literal among the values `node` may be (the arms of `a if c else b`)."""
        while isinstance(node, ast.IfExp):
            found = self.literal(node.body)
            if found is not None:
                return found
            node = node.orelse
        return self.literal(node)

    def __call__(self, body: list[ast.stmt]) -> tuple[ast.Constant, Finding] | None:
        """A kept literal that a statement of `body` assigns (`accelerator = "cuda"`)."""
        for stmt in body:
            value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
            found = self.choice(value) if value is not None else None
            if found is not None:
                return found
        return None


def calls_on_cuda_only_objects(ctx: FileContext, modules: Sequence[str]) -> list[tuple[ast.Call, str, int]]:
    """(method call, class, line) for each method called on an object of a class of a
    CUDA-only module: on the call's result itself (`bnb.nn.Params4bit(w).cuda()`)
    or on the name or attribute it was assigned to earlier in the same function
    (`self.weight = bnb.nn.Params4bit(w)` ... `self.weight.cuda(device)`, litgpt's LoRA merge:
    moving a Params4bit to a CUDA device is what quantizes it)."""
    if not modules or not any(q.split(".", 1)[0] in modules for q in ctx.imports.bindings.values()):
        return []
    made: dict[int, tuple[str, int]] = {}  # id(constructor call) -> (qualified name, line)
    for node, qual in ctx.import_chains_into(frozenset(modules)):
        call = ctx.parents.get(node)
        # (a class, by its name: a function of the library, such as bnb.functional.dequantize_4bit,
        # returns a plain tensor)
        if (
            isinstance(call, ast.Call)
            and call.func is node
            and qual.split(".", 1)[0] in modules
            and qual.rsplit(".", 1)[-1][:1].isupper()
        ):
            made[id(call)] = (qual, call.lineno)
    if not made:
        return []
    from porter.python.bindings import enclosing_scope

    assigned: dict[tuple[int, str], list[ast.Assign]] = {}  # (scope, target) -> its assignments
    for stmt in ctx.nodes(ast.Assign):
        if id(stmt.value) in made:
            for target in stmt.targets:
                if isinstance(target, (ast.Name, ast.Attribute)):
                    key = (
                        id(enclosing_scope(ctx, stmt)),
                        ast.dump(target, annotate_fields=False).replace("Store()", "Load()"),
                    )
                    assigned.setdefault(key, []).append(stmt)
    out: list[tuple[ast.Call, str, int]] = []
    for call in ctx.own_nodes(ast.Call):
        func = call.func
        if not isinstance(func, ast.Attribute):
            continue
        receiver = func.value
        found = made.get(id(receiver))
        if found is None and isinstance(receiver, (ast.Name, ast.Attribute)) and assigned:
            key = (id(enclosing_scope(ctx, call)), ast.dump(receiver, annotate_fields=False))
            before = [a for a in assigned.get(key, ()) if _runs_before(ctx, a, call)]
            found = made[id(before[-1].value)] if before else None
        if found is not None:
            out.append((call, *found))
    return out


def _runs_before(ctx: FileContext, stmt: ast.stmt, node: ast.AST) -> bool:
    """`stmt` comes earlier in a block that holds `node` (so it ran whenever `node` runs: not
    in another branch of an `if`, not after it)."""
    child, parent = node, ctx.parents.get(node)
    while parent is not None:
        if isinstance(child, ast.stmt):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(parent, field, None)
                if isinstance(block, list) and any(s is child for s in block):
                    at = next(i for i, s in enumerate(block) if s is child)
                    if any(s is stmt for s in block[:at]):
                        return True
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)):
            return False
        child, parent = parent, ctx.parents.get(parent)
    return False


def other_device_tested(test: ast.AST, devices: Sequence[str]) -> str | None:
    """The text-free name of the device `test` holds for, when it holds only there: one of its
    `and` parts (not negated) tests one of `devices` (`is_torch_rocm()`, `torch.version.hip`,
    `getattr(torch.version, "hip", None) is not None`, `env == "X" and is_npu()`). Such a
    branch is that device's code (ms-swift's ROCm branch keeps CUDA_VISIBLE_DEVICES and
    HIP_VISIBLE_DEVICES, as ROCm reads both), and a CUDA check `and`-ed with it detects that
    device (`is_torch_cuda_available() and torch.version.hip`: True on ROCm only)."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    for part in parts:
        if isinstance(part, ast.BoolOp) and isinstance(part.op, ast.And):
            found = other_device_tested(part, devices)
        else:
            found = _device_of(part, devices)
        if found is not None:
            return found
    return None


def _device_of(part: ast.AST, devices: Sequence[str]) -> str | None:
    if isinstance(part, ast.UnaryOp) or isinstance(part, ast.BoolOp):
        return None  # `not is_rocm()`, `is_rocm() or cuda()`: holds elsewhere too
    if isinstance(part, ast.Compare):
        if len(part.ops) != 1:
            return None
        right = part.comparators[0]
        if isinstance(right, ast.Constant) and right.value is None:
            if not isinstance(part.ops[0], (ast.IsNot, ast.NotEq)):
                return None  # `torch.version.hip is None`: everywhere but there
            return _device_of(part.left, devices)
        if not isinstance(part.ops[0], (ast.Eq, ast.Is, ast.In)):
            return None
        return _device_of(part.left, devices) or _device_of(right, devices)
    for node in ast.walk(part):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and is_str_constant(node.args[1])  # (only a string can be one of `devices`)
            and node.args[1].value in devices
        ):
            return node.args[1].value
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
        if name:
            words = name.lower().split("_")
            found = next((d for d in devices if d in words or name.lower() == d), None)
            if found is not None:
                return found
    return None
