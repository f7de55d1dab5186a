"""Kind `import-insert`: `import torch_mlu` once in each changed module that uses torch.

The import goes right after the module's first `import torch` (inside the same block, so a
`try:` import block keeps guarding it); without a plain `import torch`, right before the
first import of anything under torch. Modules that already import it are left alone.
"""

from __future__ import annotations

import ast

from porter.core.model import Finding
from porter.core.textio import line_ending
from porter.python.context import FileContext
from porter.rules import Rule



def screen_words(rules: list[Rule]) -> set[str]:
    return set()  # fires only where other rules edit


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


def _anchor(ctx: FileContext, anchor: str) -> tuple[ast.stmt | None, bool]:
    """Where the import goes: (statement, True to put it after / False before).

    Preference: after a module-level `import torch`; before the first module-level import
    of something under torch; then the same inside functions (lazy imports).
    """
    nodes = sorted((n for n in ctx.imports.import_nodes if not _under_type_checking(ctx, n)), key=lambda n: (n.lineno, n.col_offset))
    for module_level in (True, False):
        level = [n for n in nodes if _is_module_level(ctx, n) == module_level]
        plain = next((n for n in level if isinstance(n, ast.Import) and any(a.name == anchor for a in n.names)), None)
        if plain is not None:
            return plain, True
        under = next((n for n in level if any(m == anchor or m.startswith(anchor + ".") for m in _imports_of(n))), None)
        if under is not None:
            return under, False
    return None, False


def finalize(ctx: FileContext, rules: list[Rule], findings: list[Finding]) -> list[Finding]:
    if not any(f.edit for f in findings):
        return findings
    for rule in rules:
        module, anchor = rule.params["module"], rule.params["when_importing"]
        if ctx.imports.binds(module) or not ctx.imports.binds(anchor):
            continue
        target, after = _anchor(ctx, anchor)
        if target is None:
            continue
        line_start = ctx.index.starts[target.lineno - 1]
        indent = ctx.text[line_start:ctx.span(target)[0]]
        if indent.strip():  # `x = 1; import torch`: no clean place on that line
            continue
        end_line, _ = ctx.index.line_col(ctx.span(target)[1])
        line_end = ctx.index.starts[end_line] if end_line < len(ctx.index.starts) else len(ctx.text)
        rest = ctx.text[ctx.span(target)[1]:line_end].strip()  # what follows on its line (any line ending)
        if after and rest and not rest.startswith("#"):
            after = False  # `import torch; torch.cuda...` on one line: put ours before it
        if after:
            end_line = target.end_lineno
            line_end = ctx.index.starts[end_line] if end_line < len(ctx.index.starts) else len(ctx.text)
            body = ctx.text[ctx.index.starts[end_line - 1]:line_end]
            newline = body[len(body.rstrip("\r\n")):] or "\n"
            at = line_end - (len(newline) if body.endswith(("\n", "\r")) else 0)
            replacement = newline + indent + f"import {module}"
        else:
            at = line_start + len(indent)
            newline = line_ending(ctx.text, line_start)
            replacement = f"import {module}" + newline + indent
        findings = findings + [ctx.finding(rule, (at, at), f"import {module}", replacement=replacement)]
    return findings
