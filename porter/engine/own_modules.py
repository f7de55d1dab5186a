"""The top-level modules a tree provides itself: its own packages, which its files import by
the name of a library porter's package table knows (GPT-NeoX ships its own `megatron/`,
Megatron-DeepSpeed too; a project may vendor a pure-Python copy of another).

Where Python finds them when the project runs: packages (folders with an `__init__.py`) and
modules (`.py` files) at the top of the tree, and packages in a top-level `src/` (the src
layout). A folder without `__init__.py` is not counted: any folder could be a namespace
package, and `configs/` or `scripts/` are not.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from porter.rules import ActiveRules
from porter.tables.packages import load_package_table

LIBRARY_IMPORT = "library-import"  # the kind that reads the package table for imports

_ROOTS = ("", "src")


def own_modules(root: Path) -> frozenset[str]:
    names: set[str] = set()
    for sub in _ROOTS:
        folder = os.path.join(root, sub) if sub else str(root)
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    name = entry.name
                    if entry.is_dir(follow_symlinks=False) and name.isidentifier():
                        if os.path.isfile(os.path.join(entry.path, "__init__.py")):
                            names.add(name)
                    elif not sub and name.endswith(".py") and name[:-3].isidentifier() and entry.is_file():
                        names.add(name[:-3])
        except OSError:
            continue  # no src/, or a root porter cannot list: nothing of its own known there
    return frozenset(names)


def with_own_modules(rules: ActiveRules, root: Path) -> ActiveRules:
    """`rules` told which of the packages porter's table names are the tree's own (only when
    a library-import rule runs, and only those names: they are part of every cache key)."""
    if not rules.of_kind(LIBRARY_IMPORT):
        return rules
    known = {name.split(".", 1)[0] for entry in load_package_table(rules.target).entries.values()
             for name in entry.import_names}
    own = own_modules(root) & known
    return replace(rules, own_modules=own) if own else rules
