"""Which Python modules of a ported tree to import, under which name and sys.path entry."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from porter.core.tree import walk

# Importing these runs them: setup.py calls setup(), conftest.py expects pytest.
_NEVER_IMPORTED = {"setup.py", "conftest.py", "__main__.py"}
_SKIP_PARTS = {"site-packages", "node_modules", "__pycache__", ".venv", "venv", ".tox", "build", "dist"}


@dataclass(frozen=True)
class Module:
    rel: str  # file, relative to the tree (POSIX)
    name: str  # dotted module name
    path_entry: str  # the sys.path entry it is imported from


def find_modules(root: Path) -> list[Module]:
    """Every importable .py file: named through its package chain (folders with
    __init__.py) and imported from the folder above the chain's top."""
    found = []
    for entry in walk(root):
        rel = entry.rel
        parts = rel.split("/")
        if entry.is_symlink or not rel.endswith(".py") or parts[-1] in _NEVER_IMPORTED:
            continue
        if any(p in _SKIP_PARTS or p.startswith(".") for p in parts[:-1]):
            continue
        stem = parts[-1][:-3]
        if not stem.isidentifier():
            continue
        names = [] if stem == "__init__" else [stem]
        folder = parts[:-1]
        while folder and (root.joinpath(*folder) / "__init__.py").is_file() and folder[-1].isidentifier():
            names.insert(0, folder.pop())
        if not names:
            continue
        found.append(Module(rel, ".".join(names), str(root.joinpath(*folder).resolve())))
    return found


def own_top_names(modules: list[Module]) -> set[str]:
    """Top-level names the tree itself provides: a missing one is a broken import in the
    tree, not an absent third-party dependency."""
    return {m.name.split(".")[0] for m in modules}
