"""Start commands under the emulator: build the extension once, then run with the
emulated vendor package (torch_mlu, torch_npu) on the path. No torch in porter's own process."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from porter.emulator import environment
from porter.emulator.build import build_dir, is_built


class EmulatorError(Exception):
    """The emulator cannot be prepared (no torch, a failed build)."""


def prepare(quiet: bool = False) -> float:
    """Build the C++ extension if this torch has no cached build; seconds spent."""
    try:
        if is_built():
            return 0.0
    except RuntimeError as exc:  # no torch installed
        raise EmulatorError(str(exc)) from None
    if not quiet:
        print(
            f"porter: building the emulated device into {build_dir()} (once per environment, about a minute)...",
            file=sys.stderr,
            flush=True,
        )
    start = time.perf_counter()
    code = "from porter.emulator.build import load_extension; load_extension()"
    proc = subprocess.run([sys.executable, "-c", code], env=environment(), capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
        raise EmulatorError("building the emulated device failed:\n" + "\n".join(tail))
    return time.perf_counter() - start


def run(
    cmd: list[str], devices: int | None = None, version: str | None = None, cwd: str | None = None, target: str = "mlu"
) -> int:
    """Run `cmd` under the emulator of `target` and return its exit code (128+N when killed by
    signal N)."""
    prepare()
    try:
        proc = subprocess.run(cmd, env=environment(devices, version, target=target), cwd=cwd)
    except FileNotFoundError:
        if "/" in cmd[0] and os.path.isfile(cmd[0]):  # the file is there: what its #! line names is not
            raise EmulatorError(
                f"cannot run {cmd[0]}: the interpreter its #! line names is not found{_hint(cmd[0], target)}"
            ) from None
        raise EmulatorError(f"command not found: {cmd[0]}") from None
    except OSError as exc:  # not executable, a folder, not a program (no #! line, not a binary)
        raise EmulatorError(f"cannot run {cmd[0]}: {exc.strerror or exc}{_hint(cmd[0], target)}") from None
    return proc.returncode if proc.returncode >= 0 else 128 - proc.returncode


def _hint(program: str, target: str) -> str:
    """What to do about a command the system would not start: a Python file is run by python."""
    if program.endswith(".py"):
        return f" (run it with its interpreter: porter run --emulate {target} -- python {program})"
    return " (name an executable program, or run the file with its interpreter)"
