"""What the import harness may import before it forks a module's child, read statically.

preload_names: the third-party modules the tree imports at module level (`import x.y`,
`from x.y import z` -> x.y), in the order the files first name them. Importing them once in
the parent is what makes 300 imports take seconds instead of minutes.

starts_cold: a module whose source names "mlu" before its first `import torch_mlu` (or never
imports it) must start from a parent without torch_mlu: used that early, the device exists
only if something imported torch_mlu first, and verify must see what happens when nothing
did (PRT704). Any other module cannot reach the device before torch_mlu is imported, except
through another module of the tree, which is checked on its own. The same holds for "npu"
and torch_npu: the device and its package are parameters.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path


def _module_level_imports(tree: ast.Module) -> list[str]:
    found: list[str] = []

    def visit(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Import):
                found.extend(alias.name for alias in stmt.names)
            elif isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
                found.append(stmt.module)
            elif isinstance(stmt, (ast.If, ast.Try, ast.With)):
                # Code that runs at import time too; functions and classes are left alone.
                for part in ("body", "orelse", "finalbody"):
                    visit(getattr(stmt, part, []))
                for handler in getattr(stmt, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    return found


def preload_names(sources: dict[str, str], own: set[str], package: str = "torch_mlu") -> list[str]:
    """Third-party modules imported at module level by any of `sources` (file -> text),
    without the tree's own top-level names and the vendor package (which the harness imports
    itself)."""
    names: dict[str, None] = {}
    for text in sources.values():
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue  # its child reports the error
        for name in _module_level_imports(tree):
            top = name.split(".")[0]
            if top not in own and top not in (package, "__future__"):
                names.setdefault(name)
    return list(names)


def starts_cold(text: str, device: str = "mlu") -> bool:
    """Whether a name or a string of the module mentions the device (mlu, npu) before its
    first `import torch_<device>` / `from torch_<device> ...` (comments do not count;
    unreadable source does)."""
    package, word = f"torch_{device}", re.compile(rf"\b{device}\b")
    previous = ""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NAME:
                if tok.string == package and previous in ("import", "from"):
                    return False
                if tok.string == device:
                    return True
            elif tok.type == tokenize.STRING and word.search(tok.string):
                return True
            if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                previous = tok.string
    except (tokenize.TokenError, SyntaxError):
        return True
    return False


def read_sources(root: Path, rels: list[str]) -> dict[str, str]:
    out = {}
    for rel in rels:
        try:
            out[rel] = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            out[rel] = ""
    return out
