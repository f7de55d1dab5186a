"""Which API tables ship for a target, by torch version: a folder listing, without loading a
table. The CLI checks --target-version against it on every run, so it stays light
(optables.py, which loads and reads tables, costs more to import than a warm run spends on it)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from porter.core.datafiles import data_dir

# A table valid for every torch version of its target (the HIP table).
ANY_VERSION = "any"


def tables_dir(target: str) -> Path:
    root = data_dir("op_tables")
    targets = sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("torch_api*")))
    if target not in targets:
        raise ValueError(f"unknown target {target!r}; op_tables has: {', '.join(targets)}")
    return root / target


def available_versions(target: str) -> list[str]:
    """Torch versions with a table for `target`, oldest first (["any"] for HIP)."""
    return list(table_versions(target))


@lru_cache(maxsize=None)
def table_versions(target: str) -> tuple[str, ...]:
    """`available_versions` as a tuple. The folder is listed once per process: the op scan
    asks for every file it reads."""
    folder = tables_dir(target)
    versions = sorted((p.stem.removeprefix("torch_api_") for p in folder.glob("torch_api_*.json")), key=_version_key)
    return (*versions, *([ANY_VERSION] if (folder / "torch_api.toml").is_file() else []))


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))
