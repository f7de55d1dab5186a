"""Where porter's shipped data directories (op_tables/, rules/, ...) live.

In a checkout they sit at the repository root, beside the `porter` package. In an
installed wheel they are package data under `porter/_data/<name>` (pyproject
force-include), because nothing outside the package is installed. Loaders ask here
instead of guessing, so both layouts work without configuration.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from porter.core.files import write_atomically

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the `porter` package


def data_dir(name: str) -> Path:
    """Return the directory of shipped data `name` (e.g. "op_tables").

    Prefers `<package>/_data/<name>` (installed wheel), else `<repo root>/<name>`
    (checkout). Raises FileNotFoundError naming both places when neither exists.
    """
    candidates = (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parent / name)
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"porter data directory {name!r} not found in {candidates[0]} or {candidates[1]}")


def default_cache_dir() -> Path:
    """porter's user cache directory (results, parsed data files, compiled templates)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "porter"


def load_toml(raw: bytes) -> dict:
    """Parse one of porter's own TOML files (rules, package tables).

    tomllib is pure Python: porter's data files cost ~30 ms to parse, in every process, on
    every start. What they parse to (plain data) is kept as JSON in the user cache, keyed
    by the bytes, like __pycache__; without a usable cache directory they are parsed.
    Raises tomllib.TOMLDecodeError or UnicodeDecodeError for a malformed file.
    """
    path = default_cache_dir() / "toml" / f"{hashlib.sha256(raw).hexdigest()}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    data = tomllib.loads(raw.decode("utf-8"))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps(data).encode("utf-8"))
    except (OSError, TypeError, ValueError):
        pass  # not cacheable (a TOML date has no JSON form) or not writable: parsed next time too
    return data
