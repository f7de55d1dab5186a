"""Kind `kernel-module`: a module that is another stack's kernel code through and through is
kept as it is, with one finding at what makes it so and nothing else.

Four shapes, read from the module's top:

- it imports a GPU kernel language or another vendor's stack (`kernel_modules`: Triton,
  Numba's CUDA kernels, TensorRT-LLM, Intel IPEX) unconditionally: in its body, or in a
  top-level `try:` whose handlers raise again;
- it imports a compiled CUDA extension unconditionally (`extension_suffixes`: a module named
  `*_cuda`, apex's `fused_layer_norm_cuda`, flash-attention's `flash_attn_2_cuda`): it cannot
  even be imported on the target, so a test or a benchmark of that extension cannot start,
  and its device strings and `.cuda()` calls are no edits to make;
- it defines kernels in such a language (`@triton.jit`, `@triton.autotune`) while its import
  of it is guarded: it imports without the language, and its kernels still cannot run;
- it is a monkey patch built on a CUDA-only library (`patch_modules`: flash-attn, xformers):
  it imports the library at its top and swaps one of its own functions into a module it
  imports (`LlamaAttention.forward = forward`).

An import the module runs without is optional and makes none of these (porter's other kinds
port the module, and library-import notes the import): one in a `try:` whose handlers carry
on (`except ImportError: HAVE_TRITON = False`), or under an `if` (kinds/_optional.py). A
monkey patch's `try:` import counts unless its handler binds a working fallback for every
name it imports (`except ImportError: from .sdpa import attention`), not the same library
again nor None: a patch that only logs the failure still patches with the library.

Nothing in a kept module is ported: neither its would-be edits, nor the notes that go with
them, nor its imports are listed one by one, and the device guard leaves it alone. The
finding's subject (`module:triton`) lets the tree's run fold a folder of them into one
(porter/engine/folding.py).
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Callable, Sequence

from porter.core.model import KEPT_MODULE, Finding
from porter.python.context import FileContext
from porter.python.kinds.library_import import is_own
from porter.rules import Rule
from porter.rules.kinds import KernelModuleParams
from porter.python.kinds.base import PythonKind

# What to do, by what keeps the module; an extension's is the rule's own suggestion (how its
# kernels are ported is the target's business: BANG C for MLU, Ascend C for the NPU).
_SUGGESTION: dict[str, str | None] = {
    "language": "Use the PyTorch fallback path of this code on the target, or port the kernels by hand.",
    "extension": None,
    "patch": "Leave the patch off on the target (transformers' SDPA attention runs there), or port the kernels by hand.",
}


def screen_words(rules: list[Rule]) -> set[str]:
    """None of its own: a module is kept only from what the other kinds would port in it (a
    Triton kernel file with nothing else to change has nothing to keep)."""
    return set()


def finalize(ctx: FileContext, rules: list[Rule], findings: list[Finding]) -> list[Finding]:
    for rule in rules:
        # (what decides is the module's imports, decorators and swaps, which a module analysed
        # in groups shows whole to every group: decided once)
        kept = ctx.module_fact(("kernel-module", rule.code), lambda: kept_finding(ctx, rule))
        if kept is not None:
            return [kept]
    return findings


def kept_finding(ctx: FileContext, rule: Rule) -> Finding | None:
    """The one finding of a module kept whole, or None when the module is ported."""
    p = KernelModuleParams.of(rule)
    kernels, suffixes = p.kernel_modules, p.extension_suffixes
    found: tuple[ast.AST, str] | None = _top_level_import(ctx, lambda name: _listed(name, kernels))
    if found is not None:
        node, module = found
        why = f"it imports {module} at top level (a GPU kernel language or another vendor's stack), which does not run on the target"
        return _kept(ctx, rule, node, module, why, "language")
    found = _top_level_import(ctx, lambda name: _extension(ctx, name, suffixes))
    if found is not None:
        node, module = found
        why = (
            f"it imports {module} at top level, a compiled CUDA extension, which cannot be built or loaded on the "
            "target: the module cannot start there"
        )
        return _kept(ctx, rule, node, module, why, "extension")
    found = _kernel_definitions(ctx, kernels, p.kernel_decorators)
    if found is not None:
        node, module = found
        decorator = ast.unparse(node.func if isinstance(node, ast.Call) else node)
        why = (
            f"it defines {module} kernels (@{decorator}), which do not run on the target (its import of "
            f"{module} is guarded: the module imports without it, its kernels do not run)"
        )
        return _kept(ctx, rule, node, module, why, "language")
    found = _monkey_patch(ctx, p.patch_modules)
    if found is not None:
        node, module = found
        why = f"it patches other modules with {module} (imported at top level), whose CUDA kernels do not run on the target"
        return _kept(ctx, rule, node, module, why, "patch")
    return None


def _kept(ctx: FileContext, rule: Rule, node: ast.AST, module: str, why: str, shape: str) -> Finding:
    return ctx.finding(
        rule,
        node,
        f"module kept as it is: {why}",
        suggestion=_SUGGESTION[shape] or rule.suggestion,
        subject=f"{KEPT_MODULE}{module}",
    )


def _top_level_import(
    ctx: FileContext, listed: Callable[[str], str | None], optional_in_try: bool = True
) -> tuple[ast.Import | ast.ImportFrom, str] | None:
    """The first import the module cannot run without (its body, or a top-level `try:` that
    does not carry on without it: `optional_in_try` False counts every `try:`) of a module
    `listed` names, with that name."""
    stack = deque(ctx.tree.body)  # (popped from the left: a list's pop(0) made this quadratic)
    while stack:
        stmt = stack.popleft()
        if isinstance(stmt, ast.Try):
            if not (optional_in_try and _carries_on_without(stmt)):
                stack.extendleft(reversed(stmt.body))
            continue
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue  # (it imports nothing: _imported would say so)
        for name in _imported(stmt):
            module = listed(name)
            if module is not None:
                return stmt, module
    return None


def _imported(stmt: ast.stmt) -> list[str]:
    """The modules an import statement imports (`from numba import cuda` imports numba.cuda,
    which a dotted entry names); none for a relative import or another statement."""
    if isinstance(stmt, ast.Import):
        return [a.name for a in stmt.names]
    if isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
        return [stmt.module, *(f"{stmt.module}.{a.name}" for a in stmt.names)]
    return []


def _listed(name: str, modules: Sequence[str]) -> str | None:
    """The entry of `modules` that `name` is or lies under (`triton.language` under triton,
    `numba.cuda` itself; `numba` alone is not under `numba.cuda`)."""
    for module in modules:
        if name == module or name.startswith(module + "."):
            return module
    return None


def _extension(ctx: FileContext, name: str, suffixes: Sequence[str]) -> str | None:
    """The compiled extension `name` is (`fused_layer_norm_cuda`), unless the tree provides a
    package of that name itself."""
    top = name.split(".", 1)[0]
    if any(top.endswith(s) for s in suffixes) and not is_own(top, ctx.path, ctx.own_modules):
        return top
    return None


def _kernel_definitions(
    ctx: FileContext, modules: Sequence[str], decorators: Sequence[str]
) -> tuple[ast.AST, str] | None:
    """The first kernel the module defines with one of `modules`' `decorators` (`@triton.jit`)."""
    for fn in ctx.nodes(ast.FunctionDef):
        for deco in fn.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            qual = ctx.imports.resolve(target) or ""
            module = _listed(qual.rpartition(".")[0], modules)
            if module is not None and qual.rsplit(".", 1)[-1] in decorators:
                return deco, module
    return None


def _monkey_patch(ctx: FileContext, modules: Sequence[str]) -> tuple[ast.AST, str] | None:
    """The import that makes this a monkey patch built on one of `modules`: the module imports
    it at its top (a `try:` counts unless its handler binds a working fallback) and swaps one
    of its own functions or classes into a module it imports. A module that only uses such a
    library (its padding helpers), or that patches in another library's name, is not one."""
    found = _top_level_import(ctx, lambda name: _listed(name, modules), optional_in_try=False) if modules else None
    if found is None or _has_fallback(ctx, found[0], modules):
        return None
    own = {f.name for f in ctx.tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    for assign in ctx.nodes(ast.Assign):
        swapped_in = isinstance(assign.value, ast.Name) and assign.value.id in own
        if swapped_in and any(isinstance(t, ast.Attribute) and ctx.imports.resolve(t.value) for t in assign.targets):
            return found
    return None


def _has_fallback(ctx: FileContext, node: ast.Import | ast.ImportFrom, modules: Sequence[str]) -> bool:
    """Whether `node`, an import in a top-level `try:`, has a working fallback: a handler that
    binds every name it binds, to something other than None or the same libraries."""
    block = ctx.parents.get(node)
    if not isinstance(block, ast.Try) or not block.handlers:
        return False
    wanted = {(a.asname or a.name).split(".", 1)[0] for a in node.names}
    for handler in block.handlers:
        bound: set[str] = set()
        for stmt in handler.body:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                if not any(_listed(name, modules) for name in _imported(stmt)):
                    bound |= {(a.asname or a.name).split(".", 1)[0] for a in stmt.names}
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(stmt.name)
            elif isinstance(stmt, ast.Assign) and not (
                isinstance(stmt.value, ast.Constant) and stmt.value.value is None
            ):
                bound |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
        if not wanted <= bound:
            return False
    return True


def _carries_on_without(stmt: ast.Try) -> bool:
    """Whether a `try:` has handlers and none of them raises: what it imports is optional."""
    return bool(stmt.handlers) and not any(isinstance(n, ast.Raise) for h in stmt.handlers for n in ast.walk(h))


KIND = PythonKind("kernel-module", screen=screen_words, finalize=finalize)
