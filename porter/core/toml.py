"""`tomllib` on every Python porter supports: the standard library's from 3.11, tomli (the
same parser, published separately) on 3.10. Modules import it from here, never directly.

It is loaded on first use: a run whose TOML is all in the user cache, or not porter's to
parse (a warm run), never pays for importing the parser."""

from __future__ import annotations

import sys
from types import ModuleType


def _parser() -> ModuleType:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


class _OnFirstUse:
    """`tomllib.loads`, `tomllib.TOMLDecodeError`, ...: the module's names, imported when first asked."""

    def __getattr__(self, name: str):
        return getattr(_parser(), name)


tomllib = _OnFirstUse()

__all__ = ["tomllib"]
