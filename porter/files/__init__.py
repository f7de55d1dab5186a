"""Pipelines for files other than Python: requirements, packaging, shell, configs, ...

Each module here registers itself on import: `porter.filetypes.register(predicate, kind,
handler)` for the files it handles, and `porter.kinds.register_kind(name, required,
optional)` for the rule kinds its rules use. Every public module of this package is
imported (sorted by name) when porter first needs file types or rule kinds, so adding a
file type is adding a module. Modules named `_x` are helpers, imported by their users (some
only when a file of theirs is converted: the YAML parser, tree-sitter).
"""

from __future__ import annotations

import importlib
import os


def load_all() -> None:
    # os.listdir rather than pkgutil.iter_modules: a tenth of the cost, on every start.
    names = sorted(n[:-3] for n in os.listdir(__path__[0]) if n.endswith(".py") and not n.startswith("_"))
    for name in names:
        importlib.import_module(f"{__name__}.{name}")


load_all()
