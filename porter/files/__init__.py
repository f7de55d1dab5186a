"""Pipelines for files other than Python: requirements, packaging, shell, configs, ...

Each module here registers itself on import: `porter.filetypes.register(predicate, kind,
handler)` for the files it handles, and `porter.kinds.register_kind(name, required,
optional)` for the rule kinds its rules use. Every module of this package is imported
(sorted by name) when porter first needs file types or rule kinds, so adding a file type
is adding a module.
"""

from __future__ import annotations

import importlib
import pkgutil


def load_all() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        importlib.import_module(f"{__name__}.{info.name}")


load_all()
