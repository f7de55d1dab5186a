"""Where porter's shipped data directories (op_tables/, rules/, ...) live.

In a checkout they sit at the repository root, beside the `porter` package. In an
installed wheel they are package data under `porter/_data/<name>` (pyproject
force-include), because nothing outside the package is installed. Loaders ask here
instead of guessing, so both layouts work without configuration.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


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
