"""The top-level packages a tree provides itself, which its files may import by the name of a
library porter's package table knows (GPT-NeoX ships its own `megatron/`, Megatron-DeepSpeed
too; unsloth's repository is the `unsloth` package; a project may vendor a copy of another).

Where Python finds them when the project runs: folders with an `__init__.py` at the top of
the tree, and in a top-level `src/` (the src layout). A folder there without `__init__.py`
may be a namespace package (Megatron-LM's own `megatron/` holds only `core/`, `training/`,
... each with its `__init__.py`): the packages in it are the tree's own by their dotted names
(`megatron.core`), never the folder's bare name, as any folder could be a namespace package:
an `import vllm` of a `vllm/` folder of scripts still means the library. Its plain modules
are not counted: a script added to `scripts/` would change every file's cache key.

Only a listing of two folders and of the folders in them, with no table to read: this runs
in the parent process before any worker starts, so it costs every run its time. The names
are part of every cache key (ActiveRules.key), and a tree's packages seldom change.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from porter.rules import ActiveRules
from porter.rules.kinds import LIBRARY_IMPORT  # the kind that reads them (porter/python/kinds/library_import.py)

SOURCE_ROOTS = ("", "src")  # where the tree's packages sit: its top, and a src/ layout


def own_packages(root: Path) -> frozenset[str]:
    """The top-level packages of the tree (`megatron`), and the packages inside its namespace
    folders by their dotted names (`megatron.core`)."""
    names: set[str] = set()
    for sub in SOURCE_ROOTS:
        for entry in _listing(os.path.join(root, sub)):
            if _is_package(entry):
                names.add(entry.name)
            elif entry.name not in SOURCE_ROOTS and entry.name.isidentifier() and entry.is_dir(follow_symlinks=False):
                names.update(f"{entry.name}.{inner.name}" for inner in _listing(entry.path) if _is_package(inner))
    return frozenset(names)


def _listing(path: str) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as entries:
            return list(entries)
    except OSError:
        return []  # no src/, or a root porter cannot list: nothing of its own known there


def _is_package(entry: os.DirEntry) -> bool:
    return (
        entry.name.isidentifier()
        and entry.is_dir(follow_symlinks=False)
        and os.path.isfile(os.path.join(entry.path, "__init__.py"))
    )


def with_own_modules(rules: ActiveRules, root: Path) -> ActiveRules:
    """`rules` told which top-level packages are the tree's own (only when a rule reads them)."""
    if not rules.of_kind(LIBRARY_IMPORT):
        return rules
    own = own_packages(root)
    return replace(rules, own_modules=own) if own else rules
