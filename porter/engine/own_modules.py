"""The top-level packages a tree provides itself, which its files may import by the name of a
library porter's package table knows (GPT-NeoX ships its own `megatron/`, Megatron-DeepSpeed
too; unsloth's repository is the `unsloth` package; a project may vendor a copy of another).

Where Python finds them when the project runs: folders with an `__init__.py` at the top of
the tree, and in a top-level `src/` (the src layout). A folder without `__init__.py` is not
counted: any folder could be a namespace package, and `configs/` or `scripts/` are not.

Only a listing of two folders, with no table to read: this runs in the parent process
before any worker starts, so it costs every run its time. The names are part of every cache
key (ActiveRules.key), and a tree's packages seldom change.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from porter.rules import ActiveRules
from porter.rules.kinds import LIBRARY_IMPORT  # the kind that reads them (porter/python/kinds/library_import.py)

SOURCE_ROOTS = ("", "src")  # where the tree's packages sit: its top, and a src/ layout


def own_packages(root: Path) -> frozenset[str]:
    names: set[str] = set()
    for sub in SOURCE_ROOTS:
        try:
            with os.scandir(os.path.join(root, sub)) as entries:
                for entry in entries:
                    if (entry.name.isidentifier() and entry.is_dir(follow_symlinks=False)
                            and os.path.isfile(os.path.join(entry.path, "__init__.py"))):
                        names.add(entry.name)
        except OSError:
            continue  # no src/, or a root porter cannot list: nothing of its own known there
    return frozenset(names)


def with_own_modules(rules: ActiveRules, root: Path) -> ActiveRules:
    """`rules` told which top-level packages are the tree's own (only when a rule reads them)."""
    if not rules.of_kind(LIBRARY_IMPORT):
        return rules
    own = own_packages(root)
    return replace(rules, own_modules=own) if own else rules
