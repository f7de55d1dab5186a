"""Import modules of a ported tree under the emulator, each in a fresh forked child.

Run by `porter verify` as `python -m porter.verify.harness ROOT TIMEOUT` with the emulated
torch_mlu on PYTHONPATH and, on stdin, JSON {"modules": [[module, sys.path entry], ...],
"package_roots": [...]}; prints
one JSON result per module on stdout. Each child has its module's folder and the tree's
package roots on sys.path.

Why fork: torch is imported once here (seconds), and each module is then imported in a
child that starts from that state in milliseconds, without torch_mlu loaded. So a module
that uses "mlu" before its own `import torch_mlu` fails as it would alone, which a batch
importing modules one after another in one process would hide. The harness deliberately
imports nothing of porter and never torch_mlu itself.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
import traceback

_MAX_MESSAGE = 2000
_PACKAGE_ROOTS: list[str] = []


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


def _child(module: str, path_entry: str, root: str, out_fd: int) -> None:
    sys.path[:0] = [path_entry] + [p for p in _PACKAGE_ROOTS if p != path_entry]
    os.chdir(root)
    result: dict = {"module": module}
    try:
        __import__(module)
        result["status"] = "ok"
    except ModuleNotFoundError as exc:
        result.update(status="missing", missing=exc.name or "", error=f"{type(exc).__name__}: {exc}")
        result["file"], result["line"], result["traceback"] = _frames(exc, root)
    except SystemExit as exc:
        result.update(status="exits", error=f"SystemExit({exc.code!r}) while importing")
    except BaseException as exc:  # noqa: BLE001 - every failure of the ported code is a result
        result.update(status="error", type=type(exc).__name__, error=f"{type(exc).__name__}: {exc}"[:_MAX_MESSAGE])
        result["file"], result["line"], result["traceback"] = _frames(exc, root)
        if _asserts_its_setup(exc):
            result["status"] = "needs-setup"
    os.write(out_fd, json.dumps(result).encode())
    os.close(out_fd)
    os._exit(0)


def _run_one(module: str, path_entry: str, root: str, timeout: float) -> dict:
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        # The module's own prints must not mix with the results on stdout.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        _child(module, path_entry, root, write_fd)
    os.close(write_fd)
    chunks, deadline = [], time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read_fd)
            return {"module": module, "status": "timeout", "error": f"import did not finish within {timeout:g} s"}
        ready, _, _ = select.select([read_fd], [], [], left)
        if ready:
            data = os.read(read_fd, 65536)
            if not data:
                break
            chunks.append(data)
    os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        return {"module": module, "status": "error", "type": "crash",
                "error": f"the import crashed the interpreter (signal {sig})" if sig else "the import ended the interpreter"}
    return json.loads(b"".join(chunks))


def main() -> None:
    root, timeout = os.path.realpath(sys.argv[1]), float(sys.argv[2])
    request = json.load(sys.stdin)
    _PACKAGE_ROOTS.extend(request["package_roots"])
    import torch  # noqa: F401  (the expensive part, shared by every child)

    for module, path_entry in request["modules"]:
        print(json.dumps(_run_one(module, path_entry, root, timeout)), flush=True)


if __name__ == "__main__":
    main()
