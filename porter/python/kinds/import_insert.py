"""Kind `import-insert`: `import torch_mlu` once in each changed module that uses torch.

It must run before the first use of anything it patches, and survive the repository's own
linters. So it goes at module level where torch is imported there (an edit inside a function
still gets it there, never in another function), after the first module-level import of torch when that is a plain
`import torch` or `import torch.X` (and after the `import torch.X` lines that follow it:
isort's order), before it otherwise (`from torch.cuda import amp` first would use the patched module before the
import); inside the same block, so a `try:` import block keeps guarding it. A module that
imports torch only inside functions gets it beside those imports, in the functions that hold
an edit (in every function that imports torch when an edit is in one that does not), so that
the module itself still imports without torch_mlu (FastChat's fastchat/utils.py, imported by
a CPU-only web server); when it edits code that runs at import time it gets it after its
last module-level import (or at the top). A module that does not import torch but a library that imports it (`also_when_importing`:
transformers, peft...) gets it too, after its module-level imports, when it calls what
torch_mlu adds (an edit of a code in `also_when_edited_by`, `.mlu()`): a demo's
`AutoModel.from_pretrained(p).half().mlu()` needs the method torch_mlu adds, and nothing
else in the script imports it. On a line whose torch maps an integer device to the
registered backend (`int_device_lines`: torch >= 2.3), a module that gives torch one
(`model.to(0)`) gets it too, edited or not: evaluated before torch_mlu is imported, the int
names CUDA. The line carries `# noqa: F401`: ruff's and flake8's unused-import fix would otherwise
delete it and silently undo the port. Modules that already import it are left alone.
"""

from __future__ import annotations

import ast

from porter.core.model import Finding
from porter.core.textio import line_ending
from porter.python.context import FileContext
from porter.python.kinds._int_devices import int_device_ordinals
from porter.rules import Rule
from porter.rules.kinds import ImportInsertParams
from porter.python.kinds.base import PythonKind
from porter.python.devices import ACCELERATORS


def screen_words(rules: list[Rule]) -> set[str]:
    """None of its own: it fires where other rules edit, or (`int_device_lines`) where torch is
    given an integer device, whose literal forms are found anywhere (`*.to(0`)."""
    if not any(ImportInsertParams.of(r).int_device_lines for r in rules):
        return set()
    return {f"*{form}{digit}" for form in (".to(", "device(", "device=") for digit in "0123456789"}


def _imports_of(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and not node.level and node.module:
        return [node.module]
    return []


def _under_type_checking(ctx: FileContext, node: ast.AST) -> bool:
    """Imports under `if TYPE_CHECKING:` never run, so they cannot anchor a real import."""
    parent = ctx.parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.If) and "TYPE_CHECKING" in ast.dump(parent.test) and node not in parent.orelse:
            return True
        parent = ctx.parents.get(parent)
    return False


def _is_module_level(ctx: FileContext, node: ast.AST) -> bool:
    """At module level: in the module body or in top-level try/if blocks (not in a def/class)."""
    parent = ctx.parents.get(node)
    while parent is not None and not isinstance(parent, ast.Module):
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return False
        parent = ctx.parents.get(parent)
    return True


def _torch_import(node: ast.stmt, anchor: str) -> bool:
    return any(m == anchor or m.startswith(anchor + ".") for m in _imports_of(node))


def _plain(node: ast.stmt, anchor: str) -> bool:
    return isinstance(node, ast.Import) and any(a.name == anchor for a in node.names)


# torch's device modules: `import torch.cuda` is ported to the target's, which needs its package first.
_DEVICE_MODULES = frozenset({"cuda", *ACCELERATORS})


def _submodules_only(node: ast.stmt, anchor: str) -> bool:
    """`import torch.distributed as dist`: binds no device module, so torch_mlu may follow it
    (isort's place); `import torch.cuda` (ported to torch.mlu) needs torch_mlu first."""
    return isinstance(node, ast.Import) and all(
        a.name.startswith(anchor + ".") and a.name.split(".")[1] not in _DEVICE_MODULES for a in node.names
    )


def _anchor(ctx: FileContext, anchor: str) -> tuple[ast.stmt | None, bool]:
    """Where the import goes: (statement, True to put it after / False before); (None, True)
    for the top of the module."""
    nodes = sorted(
        (n for n in ctx.imports.import_nodes if not _under_type_checking(ctx, n) and _is_module_level(ctx, n)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    first = next((n for n in nodes if _torch_import(n, anchor)), None)
    if first is None:  # torch only inside functions: after the module's own imports
        top = [n for n in nodes if isinstance(ctx.parents.get(n), ast.Module)]
        return (top[-1], True) if top else (None, True)
    return _beside(ctx, first, anchor)


def _beside(ctx: FileContext, first: ast.stmt, anchor: str) -> tuple[ast.stmt, bool]:
    """Where the import goes beside the torch import `first`: (statement, after)."""
    if not (_plain(first, anchor) or _submodules_only(first, anchor)):
        return first, False
    # isort puts `import torch.nn as nn` right after `import torch`, and torch_mlu after both.
    body = getattr(ctx.parents.get(first), "body", [])
    at = body.index(first) if first in body else -1
    while (
        0 <= at < len(body) - 1
        and isinstance(body[at + 1], ast.Import)
        and all(a.name.startswith(anchor + ".") for a in body[at + 1].names)
    ):
        at += 1
    return (body[at] if at >= 0 else first), True


def _top_of_module(ctx: FileContext) -> int:
    """Offset after the docstring and `from __future__` imports (where an import may go first)."""
    line = 0
    for node in ctx.tree.body:
        is_doc = (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        )
        if (is_doc and line == 0) or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            assert node.end_lineno is not None  # (the parser sets it on every statement)
            line = node.end_lineno
            continue
        break
    return ctx.index.starts[line] if line < len(ctx.index.starts) else len(ctx.text)


def _torch_through_library(ctx: FileContext, rule: Rule, findings: list[Finding], ordinal: bool) -> bool:
    """The module imports a library that imports torch for it and calls what torch_mlu adds (or
    gives torch an integer device on a line that maps it by registration)."""
    codes = set(ImportInsertParams.of(rule).also_when_edited_by)
    return any(ctx.imports.binds(m) for m in ImportInsertParams.of(rule).also_when_importing) and (
        ordinal or any(f.edit and f.rule in codes for f in findings)
    )


def _ordinal_needs_it(ctx: FileContext, rule: Rule) -> bool:
    """An integer device here names the target only once the module is imported
    (porter/python/kinds/_int_devices.py): on the lines in `int_device_lines`."""
    if ctx.version not in ImportInsertParams.of(rule).int_device_lines:
        return False
    if ctx.across_groups is not None:  # a module analysed in groups: what `find` saw in each
        return bool(ctx.across_groups.get(_INT_DEVICES))
    return bool(int_device_ordinals(ctx))


_INT_DEVICES = "import-insert: an integer device given to torch"


def find(ctx: FileContext, rules: list[Rule]) -> list[Finding]:
    """Nothing, in a module analysed whole; in one analysed in groups, whether the group gives
    torch an integer device (`_ordinal_needs_it`), which only its own statements show: the
    import is placed once, for the whole module, on its skeleton (porter/python/grouped.py)."""
    if ctx.across_groups is not None:
        ctx.across_groups.setdefault(_INT_DEVICES, set()).update(n.lineno for n in int_device_ordinals(ctx))
    return []


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _first_use_before(ctx: FileContext, findings: list[Finding], anchor: ast.stmt | None) -> ast.stmt | None:
    """The first module-level statement that runs an edited line before `anchor` (the import
    the module would go beside): a notebook cell calling `.mlu()` on a model before the cell
    that imports torch needs torch_mlu there already. Definitions run their bodies later."""
    if anchor is None:
        return None
    limit = ctx.span(anchor)[0]
    starts = sorted(f.edit.start for f in findings if f.edit is not None and f.edit.start < limit)
    if not starts:
        return None
    for statement in ctx.tree.body:
        start, end = ctx.span(statement)
        if start >= limit:
            return None
        if not isinstance(statement, _DEFINITIONS) and any(start <= at < end for at in starts):
            return statement
    return None


def _function_of(ctx: FileContext, node: ast.AST) -> ast.AST | None:
    """The innermost function `node` is in (None at module level or in a class body)."""
    parent = ctx.parents.get(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        parent = ctx.parents.get(parent)
    return parent


def _local_anchors(ctx: FileContext, findings: list[Finding], anchor: str) -> list[tuple[ast.stmt, bool]] | None:
    """Where the import goes in a module that imports torch only inside functions and edits
    nothing that runs at import time (FastChat's fastchat/utils.py: a CPU-only web server
    imports it, and only get_gpu_memory() imports torch): beside each function-local import
    of torch, in the functions that hold an edit (or, for an edit outside them, in every
    function that imports torch: torch runs only there), so that the module still imports
    without torch_mlu. None for the module-level place."""
    local: dict[int, list[ast.stmt]] = {}  # function -> its own torch imports
    for node in ctx.imports.import_nodes:
        if _torch_import(node, anchor) and not _under_type_checking(ctx, node):
            function = _function_of(ctx, node)
            if function is None:
                return None  # torch at module level (or in a class body): the usual place
            local.setdefault(id(function), []).append(node)
    if not local:
        return None
    edits = sorted({f.edit.start for f in findings if f.edit is not None})
    holders: set[int] = set()
    spans = {id(fn): ctx.span(fn) for fn in ctx.nodes(ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)}
    everywhere = False
    for at in edits:
        around = sorted((fid for fid, (a, b) in spans.items() if a <= at < b), key=lambda fid: -spans[fid][0])
        if not around:
            return None  # an edit that runs at import time (or in a class body)
        holder = next((fid for fid in around if fid in local), None)
        if holder is None:
            everywhere = True  # a value a function without torch gives those with it
        else:
            holders.add(holder)
    chosen = local if everywhere else {fid: local[fid] for fid in holders}
    places: list[tuple[ast.stmt, bool]] = []
    for fid, imports in chosen.items():
        for node in sorted(imports, key=lambda n: (n.lineno, n.col_offset)):
            body = getattr(ctx.parents.get(node), "body", [])
            at = next((i for i, s in enumerate(body) if s is node), -1)
            if at > 0 and _torch_import(body[at - 1], anchor):
                continue  # in a run of torch imports: placed with its first
            places.append(_beside(ctx, node, anchor))
    return places


def finalize(ctx: FileContext, rules: list[Rule], findings: list[Finding]) -> list[Finding]:
    edited = any(f.edit for f in findings)
    for rule in rules:
        module, anchor = ImportInsertParams.of(rule).module, ImportInsertParams.of(rule).when_importing
        if ctx.imports.binds(module):
            continue
        ordinal = not edited and _ordinal_needs_it(ctx, rule)
        if not edited and not ordinal:
            continue
        if not ctx.imports.binds(anchor) and not _torch_through_library(ctx, rule, findings, ordinal):
            continue  # a helper that only receives torch objects: its callers import torch_mlu
        message = f"import {module}" + (
            " (an integer device here names the target only once it is imported)" if ordinal else ""
        )
        places = _local_anchors(ctx, findings, anchor) if ctx.imports.binds(anchor) else None
        if places:
            for place, place_after in places:
                added = _inserted(ctx, rule, place, place_after, f"import {module}  # noqa: F401", message)
                if added is not None:
                    findings = findings + [added]
            continue
        target, after = _anchor(ctx, anchor)
        earlier = _first_use_before(ctx, findings, target)
        if earlier is not None:  # the module runs a converted line before torch's import
            target, after = earlier, False
        statement = f"import {module}  # noqa: F401"
        if target is None:
            at = _top_of_module(ctx)
            if at == len(ctx.text) and ctx.text and not ctx.text.endswith(("\n", "\r")):
                replacement = line_ending(ctx.text, 0) + statement
            else:
                replacement = statement + line_ending(ctx.text, 0)
            findings = findings + [ctx.finding(rule, (at, at), message, replacement=replacement)]
            continue
        added = _inserted(ctx, rule, target, after, statement, message)
        if added is not None:
            findings = findings + [added]
    return findings


def _inserted(
    ctx: FileContext, rule: Rule, target: ast.stmt, after: bool, statement: str, message: str
) -> Finding | None:
    """The finding that puts `statement` on its own line before or after `target` (None where
    the line has no clean place for it)."""
    line_start = ctx.index.starts[target.lineno - 1]
    indent = ctx.text[line_start : ctx.span(target)[0]]
    if indent.strip():  # `x = 1; import torch`: no clean place on that line
        return None
    end_line, _ = ctx.index.line_col(ctx.span(target)[1])
    line_end = ctx.index.starts[end_line] if end_line < len(ctx.index.starts) else len(ctx.text)
    rest = ctx.text[ctx.span(target)[1] : line_end].strip()  # what follows on its line (any line ending)
    if after and rest and not rest.startswith("#"):
        after = False  # `import torch; torch.cuda...` on one line: put ours before it
    if after:
        assert target.end_lineno is not None  # (the parser sets it on every statement)
        end_line = target.end_lineno
        line_end = ctx.index.starts[end_line] if end_line < len(ctx.index.starts) else len(ctx.text)
        body = ctx.text[ctx.index.starts[end_line - 1] : line_end]
        newline = body[len(body.rstrip("\r\n")) :] or "\n"
        at = line_end - (len(newline) if body.endswith(("\n", "\r")) else 0)
        replacement = newline + indent + statement
    else:
        at = line_start + len(indent)
        newline = line_ending(ctx.text, line_start)
        replacement = statement + newline + indent
    return ctx.finding(rule, (at, at), message, replacement=replacement)


KIND = PythonKind("import-insert", screen=screen_words, find=find, finalize=finalize, whole_module=True)
