"""Names a package loads on first use (PEP 562's module `__getattr__`): a command that needs
one name of a package does not pay for importing the modules of all the others."""

from __future__ import annotations

import importlib
from collections.abc import Callable


def names_on_first_use(package: str, where: dict[str, str]) -> Callable[[str], object]:
    """The `__getattr__` of `package`: each name of `where` (name -> module) is imported from
    its module when it is first asked for."""

    def __getattr__(name: str) -> object:
        if name in where:
            return getattr(importlib.import_module(where[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
