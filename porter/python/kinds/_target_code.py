"""Code that already handles the target: its CUDA side stays CUDA's (device-guard keeps it).

A project that already runs on the target (LLaMA-Factory and ms-swift on Ascend: `if
is_torch_npu_available():` beside `if is_torch_cuda_available():`) has CUDA code next to the
target's own. Porting that CUDA code would make a second target path beside the first
(`torch.npu.get_device_name()` twice, `["npu", "npu"]`), and the CUDA path would be gone for
the machines that still run it. The shapes below are each found by what names the target's device
(`target_device`: a name such as `is_torch_npu_available`, `DeviceType.NPU`, `torch.npu`, or a
comparison with the string "npu"):

- an if/elif chain with a branch for the target: its CUDA branches are kept;
- sibling `if` statements in one block, one for the target: the CUDA ones are kept;
- `is_npu() or is_cuda()`: the CUDA operand is kept;
- a list, tuple or set of device names that holds the target's (`runs_on(["cuda", "npu"])`):
  its "cuda" is kept; so is the "cuda" or "GPU" entry of a dictionary that has the target's
  (`{"GPU": "CUDA_VISIBLE_DEVICES", "NPU": "ASCEND_VISIBLE_DEVICES"}`);
- `x if is_npu() else y`: y is chosen off the target, and kept;
- a block's flags: `is_cuda = torch.cuda.is_available()` beside `is_npu = is_torch_npu_available()`
  (or beside an `if` for the target) is kept.

A branch or operand is "CUDA's" when its test calls a CUDA check of the rule, names CUDA
(`is_torch_cuda_available`, `DeviceType.CUDA`) or compares with a "cuda" (or "gpu") string.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache

from porter.python.context import FileContext, is_str_constant
from porter.python.kinds import _guards as guards
from porter.rules import Rule

Region = tuple[int, int, str]  # (start, end, why), as device_guard keeps them


def beside_target_code(ctx: FileContext, rule: Rule, target: str) -> list[Region]:
    """The CUDA code of the module that stands beside the target's own (see the module)."""
    if not _mentions(target).search(ctx.text):
        return []  # every shape names the target somewhere in the text: most modules do not
    regions: list[Region] = []
    # The `if`s a group of a large module holds, and those beside its statements in the module's
    # body (the only block it shares with other groups: porter/python/grouped.py); all, when whole.
    tops = [n for n in ctx.own_and_top_level(ast.If) if not guards.is_elif(ctx, n)]
    for top in tops:
        if ctx.owns(top):
            regions += _chain(ctx, rule, target, guards.chain(top))
    regions += _siblings(ctx, rule, target, tops)
    for both in ctx.own_nodes(ast.BoolOp):
        if isinstance(both.op, ast.Or) and any(_tests(ctx, v, target) for v in both.values):
            for value in both.values:
                if _tests_cuda(ctx, rule, value) and not _tests(ctx, value, target):
                    regions.append((*ctx.span(value), f"is CUDA's beside the {_name(target)} test of the same `or`"))
    for names in ctx.own_nodes(ast.List, ast.Tuple, ast.Set):
        if any(_is_string(e, target) for e in names.elts):
            for e in names.elts:
                if _is_string(e, "cuda"):
                    regions.append((*ctx.span(e), f"is CUDA's, beside {target!r} in the same list"))
    for table in ctx.own_nodes(ast.Dict):
        keys = {id(k): k.value for k in table.keys if k is not None and is_str_constant(k)}
        own = next((name for name in keys.values() if name.lower() == target), None)
        if own is not None:
            for key, value in zip(table.keys, table.values):
                name = keys.get(id(key))
                if name is not None and name.lower() in _CUDA_NAMES:
                    why = f"is the {name!r} entry beside {own!r}, the {_name(target)}'s own"
                    regions.append((*ctx.span(value), why))
    for choice in ctx.own_nodes(ast.IfExp):
        if _tests(ctx, choice.test, target) and not _tests(ctx, choice.orelse, target):
            # `'ASCEND_RT_VISIBLE_DEVICES' if is_torch_npu_available() else 'CUDA_VISIBLE_DEVICES'`
            regions.append((*ctx.span(choice.orelse), f"is chosen where the {_name(target)} test beside it fails"))
    return regions


def _chain(ctx: FileContext, rule: Rule, target: str, branches: list[ast.If]) -> list[Region]:
    own = next((b for b in branches if _tests(ctx, b.test, target)), None)
    if own is None:
        return []
    why = f"is the CUDA branch of a chain with its own {_name(target)} branch (line {own.lineno})"
    return [
        (ctx.span(b)[0], ctx.span(b.body[-1])[1], why)
        for b in branches
        if b is not own and _tests_cuda(ctx, rule, b.test) and not _tests(ctx, b.test, target)
    ]


def _siblings(ctx: FileContext, rule: Rule, target: str, tops: list[ast.If]) -> list[Region]:
    """CUDA `if`s of a block that also has an `if` for the target (LLaMA-Factory's env report:
    `if is_torch_cuda_available(): ...` then `if is_torch_npu_available(): ...`)."""
    # Only the statements that can mark a block or be kept are placed (a module of 200,000
    # assignments has few device tests): the flags first, then the blocks they and the ifs are in.
    candidates = [
        a
        for a in ctx.own_and_top_level(ast.Assign)
        if isinstance(a.value, _FLAG_VALUES)
        and (_flag_for(ctx, a.value, target) or _is_check_value(ctx, rule, a.value))
    ]
    block_of = _blocks(ctx, [*tops, *candidates])
    blocks: dict[tuple[int, str], list[ast.If]] = {}
    for top in tops:
        if id(top) in block_of:
            blocks.setdefault(block_of[id(top)], []).append(top)
    # A block's flags (`is_cuda = torch.cuda.is_available()` beside `is_npu = is_torch_npu_available()`).
    flags: dict[tuple[int, str], list[ast.Assign]] = {}
    for assign in candidates:
        if id(assign) in block_of:
            flags.setdefault(block_of[id(assign)], []).append(assign)
    regions: list[Region] = []
    for where, assigns in flags.items():
        own_flag = next((a for a in assigns if _flag_for(ctx, a.value, target)), None)
        own_if = next(
            (t for t in blocks.get(where, ()) if any(_tests(ctx, b.test, target) for b in guards.chain(t))), None
        )
        mark = own_flag or own_if
        if mark is None:
            continue
        for a in assigns:
            if a is not own_flag and _is_check_value(ctx, rule, a.value) and not _flag_for(ctx, a.value, target):
                why = f"is CUDA's flag beside this block's own {_name(target)} test (line {mark.lineno})"
                regions.append((*ctx.span(a), why))
    for block in blocks.values():
        own = next((t for t in block if any(_tests(ctx, b.test, target) for b in guards.chain(t))), None)
        if own is None:
            continue
        why = f"is the CUDA branch beside this block's own {_name(target)} branch (line {own.lineno})"
        for top in block:
            branches = guards.chain(top)
            if top is own or any(_tests(ctx, b.test, target) for b in branches):
                continue  # a chain with a target branch is one of its own (`_chain`)
            first = branches[0]
            if _tests_cuda(ctx, rule, first.test):
                regions.append((ctx.span(first)[0], ctx.span(first.body[-1])[1], why))
    return regions


@lru_cache(maxsize=None)
def _mentions(target: str) -> re.Pattern[str]:
    return re.compile(re.escape(target), re.IGNORECASE)


def _blocks(ctx: FileContext, statements: list[ast.stmt]) -> dict[int, tuple[int, str]]:
    """id(statement) -> (id(its parent), the field whose list holds it), for these statements:
    each parent's lists are read once (a test per statement of every list was quadratic)."""
    wanted = {id(s) for s in statements}
    parents = {id(p): p for s in statements if (p := ctx.parents.get(s)) is not None}
    out: dict[int, tuple[int, str]] = {}
    for parent in parents.values():
        for field in ("body", "orelse", "finalbody"):
            for stmt in getattr(parent, field, ()) or ():
                if id(stmt) in wanted:
                    out[id(stmt)] = (id(parent), field)
    return out


def _tests(ctx: FileContext, test: ast.AST, device: str) -> bool:
    """`test` names `device`: a name or attribute for it, or a comparison with its string."""
    start, end = ctx.span(test)
    if not _mentions(device).search(ctx.text, start, end):
        return False  # (the text first: walking every test of a module cost most of the pass)
    if guards.other_device(test, [device]):
        return True
    return any(
        isinstance(n, ast.Compare) and any(_is_string(c, device) for c in [n.left, *n.comparators, *_elts(n)])
        for n in ast.walk(test)
    )


def _tests_cuda(ctx: FileContext, rule: Rule, test: ast.AST) -> bool:
    """CUDA's side: a CUDA check, a name for CUDA, or a comparison with "cuda" or "gpu" (what
    device-name helpers answer on NVIDIA machines: LLaMA-Factory's get_device_name)."""
    return (
        _tests(ctx, test, "cuda")
        or any(guards.is_check(ctx, n, rule) for n in ast.walk(test))
        or any(
            isinstance(n, ast.Compare) and any(_is_string(c, "gpu") for c in [n.left, *n.comparators])
            for n in ast.walk(test)
        )
    )


# What a flag's value is (`is_npu = is_torch_npu_available()`, `not ...`, `a and b`, `dev == "npu"`).
_FLAG_VALUES = (ast.Call, ast.UnaryOp, ast.BoolOp, ast.Compare)


def _flag_for(ctx: FileContext, value: ast.AST, device: str) -> bool:
    """A flag's value that tests `device`: a call named for it, a comparison with its string,
    or `not` / `and` / `or` of those. Only the called name is read, not the arguments: most
    assignments are calls, and walking their arguments cost more than the rest of the pass."""
    if isinstance(value, ast.Call):
        return guards.other_device(value.func, [device])
    if isinstance(value, ast.UnaryOp):
        return _flag_for(ctx, value.operand, device)
    if isinstance(value, ast.BoolOp):
        return any(_flag_for(ctx, v, device) for v in value.values)
    return isinstance(value, ast.Compare) and _tests(ctx, value, device)


def _is_check_value(ctx: FileContext, rule: Rule, value: ast.AST) -> bool:
    """A value that is a CUDA check and nothing else (a check call, `not` or `and` of them)."""
    if isinstance(value, ast.Call):
        return guards.is_check(ctx, value, rule)
    if isinstance(value, ast.UnaryOp):
        return _is_check_value(ctx, rule, value.operand)
    if isinstance(value, ast.BoolOp):
        return any(_is_check_value(ctx, rule, v) for v in value.values)
    return False


_CUDA_NAMES = ("cuda", "gpu")


def _elts(compare: ast.Compare) -> list[ast.expr]:
    return [e for c in compare.comparators if isinstance(c, (ast.Tuple, ast.List, ast.Set)) for e in c.elts]


def _is_string(node: ast.AST, device: str) -> bool:
    """The literal "cuda" or "cuda:N" for device "cuda"."""
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (node.value == device or node.value.startswith(device + ":"))
    )


def _name(target: str) -> str:
    return target.upper()
