"""Run ported rule fixtures under the emulated MLU (tests/test_fixtures_run_emulated.py).

Each path given is imported as a script, its top-level code run; one JSON line says, per
path, "ok", "failed" (with the error) or "skipped": a module it imports at top level (not
under a try that carries on without it) is not installed here, or it skips itself (`pytest.importorskip`).
"""

import ast
import importlib.util
import json
import runpy
import signal
import sys
import warnings

import torch  # noqa: F401  (loaded once, before the per-case clock starts)
import torch_mlu  # noqa: F401

SECONDS_PER_CASE = 30


def required_imports(tree: ast.Module) -> set[str]:
    """Top-level packages the module imports when it runs, outside a `try` that carries on
    without them (an optional import)."""
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Import):
                names.update(alias.name.split(".")[0] for alias in stmt.names)
            elif isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
                names.add(stmt.module.split(".")[0])
            elif isinstance(stmt, ast.If):
                visit(stmt.body)
                visit(stmt.orelse)
            elif isinstance(stmt, ast.Try) and any(isinstance(n, ast.Raise) for h in stmt.handlers for n in ast.walk(h)):
                visit(stmt.body)  # its handler raises again: the import is required all the same

    visit(tree.body)
    return names


class TooSlow(Exception):
    pass


def _too_slow(*_: object) -> None:
    raise TooSlow(f"still running after {SECONDS_PER_CASE} s")


def run(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        missing = sorted(n for n in required_imports(ast.parse(fh.read())) if importlib.util.find_spec(n) is None)
    if missing:
        return {"status": "skipped", "why": "not installed here: " + ", ".join(missing)}
    signal.alarm(SECONDS_PER_CASE)
    try:
        runpy.run_path(path, run_name="ported_fixture")
        return {"status": "ok"}
    except BaseException as exc:  # noqa: BLE001  (SystemExit, a test's skip: all are answers)
        if type(exc).__name__ == "Skipped":  # pytest.importorskip at top level
            return {"status": "skipped", "why": str(exc)[:200]}
        return {"status": "failed", "why": f"{type(exc).__name__}: {str(exc)[:300]}"}
    finally:
        signal.alarm(0)


if __name__ == "__main__":
    signal.signal(signal.SIGALRM, _too_slow)
    warnings.simplefilter("ignore")
    print(json.dumps({path: run(path) for path in sys.argv[1:]}))
