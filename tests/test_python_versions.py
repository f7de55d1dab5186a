"""porter runs on every Python pyproject.toml admits (>=3.10): tomllib is new in 3.11, so only
porter/core/toml.py imports it (tomli before 3.11); a direct import elsewhere broke 3.10."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "porter"


def test_only_core_toml_imports_tomllib():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path == PACKAGE / "core" / "toml.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom) and node.module
                else []
            )
            if "tomllib" in names:
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert offenders == [], f"import tomllib from porter.core.toml instead: {offenders}"
