"""Run ported rule fixtures under the emulated device (tests/test_fixtures_run_emulated.py).

Each path given is run as a script would be (its own sys.argv, the same working folder
each time); one JSON line says, per path, "ok", "failed" (with the error) or "skipped":
what it imports is not installed here (a ModuleNotFoundError for a package this
environment lacks, raised when the import is reached; an import the code guards or never
reaches does not stop it), or it skips itself (`pytest.importorskip`).
"""

import importlib.util
import json
import os
import runpy
import signal
import sys
import warnings

import torch  # noqa: F401  (loaded once, before the per-case clock starts)

# The vendor package the emulator put on the path: one per process (torch_mlu or torch_npu).
for _package in ("torch_mlu", "torch_npu"):
    if importlib.util.find_spec(_package) is not None:
        importlib.import_module(_package)
        break

SECONDS_PER_CASE = 30


class TooSlow(Exception):
    pass


def _too_slow(*_: object) -> None:
    raise TooSlow(f"still running after {SECONDS_PER_CASE} s")


def _absent(exc: ModuleNotFoundError) -> str | None:
    """The package a failed import names, when it is not installed here (a module of the
    fixture's own project, such as `from nets import Net`, is not either)."""
    top = (exc.name or "").split(".")[0]
    try:
        return top if top and importlib.util.find_spec(top) is None else None
    except (ImportError, ValueError):
        return top


def run(path: str) -> dict:
    signal.alarm(SECONDS_PER_CASE)
    argv, cwd = sys.argv, os.getcwd()
    # As `python path`: a parse_args() at the top level reads no runner's arguments.
    sys.argv = [path]
    try:
        runpy.run_path(path, run_name="ported_fixture")
        return {"status": "ok"}
    except ModuleNotFoundError as exc:
        missing = _absent(exc)
        if missing:
            return {"status": "skipped", "why": f"not installed here: {missing}"}
        return {"status": "failed", "why": f"{type(exc).__name__}: {str(exc)[:300]}"}
    except BaseException as exc:  # noqa: BLE001  (SystemExit, a test's skip: all are answers)
        if type(exc).__name__ == "Skipped":  # pytest.importorskip at top level
            return {"status": "skipped", "why": str(exc)[:200]}
        return {"status": "failed", "why": f"{type(exc).__name__}: {str(exc)[:300]}"}
    finally:
        signal.alarm(0)
        sys.argv = argv
        os.chdir(cwd)


if __name__ == "__main__":
    signal.signal(signal.SIGALRM, _too_slow)
    warnings.simplefilter("ignore")
    print(json.dumps({path: run(path) for path in sys.argv[1:]}))
