"""Where porter's shipped data directories (op_tables/, rules/, ...) live.

In a checkout they sit at the repository root, beside the `porter` package. In an
installed wheel they are package data under `porter/_data/<name>` (pyproject
force-include), because nothing outside the package is installed. Loaders ask here
instead of guessing, so both layouts work without configuration.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from porter.core.cache_writes import cache_write
from porter.core.files import write_beneath
from porter.core.toml import tomllib

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


_USER_CACHE = [True]  # False after --no-cache: nothing is read from or written to it


def default_cache_dir() -> Path:
    """porter's user cache directory (results, parsed data files, compiled templates)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "porter"


def disable_user_cache() -> None:
    """`--no-cache`: this process neither reads nor writes the user cache directory (parsed
    data files and compiled templates included, not only results)."""
    _USER_CACHE[0] = False


def user_cache_dir() -> Path | None:
    """The user cache directory, or None under --no-cache."""
    return default_cache_dir() if _USER_CACHE[0] else None


def load_toml(raw: bytes) -> dict:
    """Parse one of porter's own TOML files (rules, package tables).

    tomllib is pure Python: porter's data files cost ~30 ms to parse, in every process, on
    every start. What they parse to (plain data) is kept as JSON in the user cache, keyed
    by the bytes, like __pycache__; without a usable cache directory they are parsed.
    An entry is a header line (the source's hash and the payload's checksum), then the JSON:
    one that does not verify, or does not hold a table, is parsed again, never trusted.
    Raises tomllib.TOMLDecodeError or UnicodeDecodeError for a malformed file.
    """
    import hashlib  # here: finding a data folder (every start) does not load OpenSSL's hashes

    cache = user_cache_dir()
    digest = hashlib.sha256(raw).hexdigest()
    rel = f"toml/{digest}.json"
    if cache is not None:
        try:
            header, _, payload = (cache / rel).read_bytes().partition(b"\n")
            meta = json.loads(header)
            if (
                isinstance(meta, dict)
                and meta.get("source") == digest
                and meta.get("sha256") == hashlib.sha256(payload).hexdigest()
            ):
                data = json.loads(payload)
                if isinstance(data, dict):
                    return data
        except (OSError, ValueError):
            pass
    data = tomllib.loads(raw.decode("utf-8"))
    if cache is None:
        return data
    try:
        payload = json.dumps(data).encode("utf-8")
    except (TypeError, ValueError):
        return data  # not cacheable (a TOML date has no JSON form): parsed next time too
    header = json.dumps({"source": digest, "sha256": hashlib.sha256(payload).hexdigest()}).encode("utf-8")
    cache_write(cache, lambda: write_beneath(cache, rel, header + b"\n" + payload))  # not writable: parsed next time
    return data
