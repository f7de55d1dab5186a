"""`tomllib` on every Python porter supports: the standard library's from 3.11, tomli (the
same parser, published separately) on 3.10. Modules import it from here, never directly."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["tomllib"]
