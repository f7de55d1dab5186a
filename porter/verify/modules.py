"""Which Python modules of a ported tree to import, under which name and sys.path entry."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from porter.core.tree import LORA_DIR, REPORT_DIR, walk

# Importing these runs them: setup.py calls setup(), conftest.py expects pytest.
_NEVER_IMPORTED = {"setup.py", "conftest.py", "__main__.py"}
_SKIP_PARTS = {"site-packages", "node_modules", "__pycache__", ".venv", "venv", ".tox", "build", "dist"}


@dataclass(frozen=True)
class Module:
    rel: str  # file, relative to the tree (POSIX)
    name: str  # dotted module name
    path_entry: str  # the sys.path entry it is imported from


def find_modules(root: Path) -> list[Module]:
    """Every importable .py file, named through its package chain and imported from the
    folder above the chain's top. The chain runs up to the highest folder with an
    __init__.py; folders between without one are namespace packages (PEP 420), which
    Python imports too (src/pkg/third_party/kernels/x.py is pkg.third_party.kernels.x)."""
    found = []
    for entry in walk(root):
        rel = entry.rel
        parts = rel.split("/")
        if entry.is_symlink or entry.skipped or entry.failed or not rel.endswith(".py") or parts[-1] in _NEVER_IMPORTED:
            continue
        if parts[0] in (REPORT_DIR, LORA_DIR):
            continue  # porter's own outputs in OUT (the LoRA entry point is run, not imported)
        if any(p in _SKIP_PARTS or p.startswith(".") for p in parts[:-1]):
            continue
        stem = parts[-1][:-3]
        if not stem.isidentifier():
            continue
        folders = parts[:-1]
        top = len(folders)  # index of the chain's first folder (len: no package)
        for i in range(len(folders) - 1, -1, -1):
            if not folders[i].isidentifier():
                break
            if (root.joinpath(*folders[: i + 1]) / "__init__.py").is_file():
                top = i
        names = folders[top:] + ([] if stem == "__init__" else [stem])
        if not names:
            continue
        found.append(Module(rel, ".".join(names), str(root.joinpath(*folders[:top]).resolve())))
    return found


def package_roots(modules: list[Module]) -> list[str]:
    """The folders packages are imported from (the tree's root, src/): on sys.path for every
    import, as an installed project would be. Folders of loose scripts are not, so that
    their module names cannot shadow each other."""
    return sorted({m.path_entry for m in modules if "." in m.name or m.rel.endswith("__init__.py")})


def own_top_names(modules: list[Module]) -> set[str]:
    """Top-level names the tree itself provides: a missing one is a broken import in the
    tree, not an absent third-party dependency."""
    return {m.name.split(".")[0] for m in modules}
