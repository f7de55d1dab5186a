"""Import one module of a ported tree, in a process forked for it, and describe the outcome.

Runs inside the import harness's children, so it imports nothing of porter: whatever it
loaded would be in every child's sys.modules.
"""

from __future__ import annotations

import os
import sys
import traceback

_MAX_MESSAGE = 2000


def _frames(exc: BaseException, root: str) -> tuple[str | None, int, list[str]]:
    """The innermost traceback frame inside ROOT (file relative to it, line), and the
    traceback's last lines."""
    frames = traceback.extract_tb(exc.__traceback__)
    where, line = None, 0
    for fr in frames:
        path = os.path.realpath(fr.filename)
        if path.startswith(root + os.sep):
            where, line = os.path.relpath(path, root), fr.lineno or 0
    if isinstance(exc, SyntaxError) and exc.filename and os.path.realpath(exc.filename).startswith(root + os.sep):
        where, line = os.path.relpath(os.path.realpath(exc.filename), root), exc.lineno or 0
    text = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return where, line, "".join(text).splitlines()[-12:]


def _asserts_its_setup(exc: BaseException) -> bool:
    """A script that checks its own configuration at its top level (`assert BASE_MODEL, "Please
    specify BASE_MODEL"`): an AssertionError raised by module-level code, not by torch or a
    function. Importing it cannot succeed without that setup; it says nothing about the port."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return isinstance(exc, AssertionError) and tb is not None and tb.tb_frame.f_code.co_name == "<module>"


def import_one(module: str, path_entry: str, root: str, package_roots: list[str]) -> dict:
    """Import `module` with its folder and the tree's package roots on sys.path, from ROOT."""
    sys.path[:0] = [path_entry] + [p for p in package_roots if p != path_entry]
    os.chdir(root)
    result: dict = {"module": module}
    try:
        __import__(module)
        result["status"] = "ok"
    except ModuleNotFoundError as exc:
        result.update(status="missing", missing=exc.name or "", error=f"{type(exc).__name__}: {exc}"[:_MAX_MESSAGE])
        result["file"], result["line"], result["traceback"] = _frames(exc, root)
        if not all(part.isidentifier() for part in (exc.name or "").split(".")):
            # importlib.metadata's PackageNotFoundError (transformers' require_version raises
            # one) holds a sentence, not a module name: a guard's message, read as one.
            result.update(status="error", type=type(exc).__name__, import_error=True)
            del result["missing"]
    except SystemExit as exc:
        result.update(status="exits", error=f"SystemExit({exc.code!r}) while importing")
    except BaseException as exc:  # noqa: BLE001 - every failure of the ported code is a result
        result.update(status="error", type=type(exc).__name__, error=f"{type(exc).__name__}: {exc}"[:_MAX_MESSAGE])
        result["import_error"] = isinstance(exc, ImportError)  # an optional-package guard is one
        result["file"], result["line"], result["traceback"] = _frames(exc, root)
        if _asserts_its_setup(exc):
            result["status"] = "needs-setup"
    return result
