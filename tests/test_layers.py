"""porter's house: imports go down the layers only, and no module is in an import circle.

The layers are declared once, in pyproject.toml's [tool.importlinter] contract; this test
runs that contract and then looks for circles inside a layer too (a cycle between two
modules of porter/filetypes would break no layer rule, but is still a circle).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

grimp = pytest.importorskip("grimp")
ROOT = Path(__file__).resolve().parents[1]


def test_layer_contract_is_kept():
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    modules = sorted(graph.modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in modules:
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circle():
    graph = grimp.build_graph("porter", include_external_packages=False)
    cycles = _cycles(graph)
    assert not cycles, "import circles: " + "; ".join(" <-> ".join(c) for c in cycles)
