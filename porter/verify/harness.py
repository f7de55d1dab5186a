"""Import modules of a ported tree under the emulator, each in a child forked for it, several
children at a time, from a parent that has already imported what they share.

Run by `porter verify` as `python -m porter.verify.harness ROOT TIMEOUT JOBS MODE PACKAGE`
with the emulated vendor package PACKAGE (torch_mlu, torch_npu) on PYTHONPATH and, on stdin, JSON {"modules": [[module, sys.path
entry, file], ...], "package_roots": [...], "preload": [...]}; prints one JSON result per
module (with its "path": the file) on stdout as each finishes.

Why fork: the expensive part of importing a module is importing torch, transformers and
the like (seconds each); they are imported once here and each child starts from that state
in milliseconds, while a module's own side effects (patches, sys.exit, a crash) die with
its child. Modules of one package go through a parent of their own that has imported the
package, which each of them would import first anyway (_package_parent). MODE says how far
the parent goes:
- "cold": torch only, not the vendor package, so a module that uses "mlu" before its own
  `import torch_mlu` fails as it would alone (porter verify sends those here, and every
  module whose import failed elsewhere, to confirm it alone);
- "warm": torch, the vendor package and the third-party modules the tree imports ("preload";
  transformers imports torch_mlu / torch_npu itself, so every module importing it sees it
  loaded).

A module's time limit counts its own time from the moment its child starts: time spent
waiting for a CPU while other imports run is not its own (owntime.py). The harness imports
nothing of porter but the two leaf modules below, which import nothing of it either.
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import sys
import time
from dataclasses import dataclass, field

from porter.verify.importer import import_one
from porter.verify.owntime import own_seconds, waited_for_cpu

# How often a running child's own time is looked at, seconds.
_POLL = 0.25
# A package's parent that reports nothing for this many module time limits is stuck (each of
# its modules has its own limit, counted by the parent itself).
_STALLED = 10


@dataclass
class _Task:
    """A forked process importing one module, or a package's parent importing the package
    and then forking a child for each of its modules, one after another."""

    items: list[list[str]]  # [module, sys.path entry, file]
    pid: int
    fd: int
    started: float
    last: float  # when it last reported a result
    buffer: bytes = b""
    done: set[str] = field(default_factory=set)  # files reported


class _Timeout(Exception):
    pass


def _on_alarm(*_: object) -> None:
    raise _Timeout


def _import_within(name: str, limit: float) -> None:
    """Import `name` within `limit` seconds, whatever it raises: whoever needs it meets the
    failure again and reports it as its own."""
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        __import__(name)
    except BaseException:  # noqa: BLE001 - SystemExit and the alarm included
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)


def preload(names: list[str], limit: float) -> None:
    for name in names:
        _import_within(name, limit)
    # Objects alive now stay out of the collector's reach: a child's collection then does not
    # touch (and so copy) the parent's pages.
    gc.freeze()


def _write(fd: int, result: dict) -> None:
    data = (json.dumps(result) + "\n").encode()
    while data:
        data = data[os.write(fd, data) :]


def _spawn(work) -> tuple[int, int]:
    read_fd, write_fd = os.pipe()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            work(write_fd)
        finally:
            os._exit(0)
    os.close(write_fd)
    return pid, read_fd


def _package_parent(items: list[list[str]], root: str, package_roots: list[str], timeout: float, fd: int) -> None:
    """Import the modules' package, then each module in a child of this process. Importing a
    module alone imports its package first, so its siblings may share that work: the state
    each child starts from is the one it would reach alone before its own code runs."""
    os.setpgrp()  # killed with its children, should it stop answering
    sys.path[:0] = [items[0][1]] + [p for p in package_roots if p != items[0][1]]
    os.chdir(root)
    _import_within(items[0][0].rsplit(".", 1)[0], timeout)
    gc.freeze()
    for result in run_all(items, root, package_roots, timeout, 1, grouped=False):
        _write(fd, result)


def _plan(items: list[list[str]], grouped: bool) -> list[list[list[str]]]:
    """Tasks: modules of one package (same name and sys.path entry) together, others alone;
    the largest last, so that they are taken first."""
    if not grouped:
        return [[item] for item in reversed(items)]
    packages: dict[tuple[str, str], list[list[str]]] = {}
    alone = []
    for item in items:
        if "." in item[0]:
            packages.setdefault((item[0].rsplit(".", 1)[0], item[1]), []).append(item)
        else:
            alone.append([item])
    tasks = alone + [group if len(group) > 1 else [group[0]] for group in packages.values()]
    return sorted(tasks, key=len)


def _start(batch: list[list[str]], root: str, package_roots: list[str], timeout: float) -> _Task:
    if len(batch) == 1:
        module, path_entry, path = batch[0]
        work = lambda fd: _write(fd, {**import_one(module, path_entry, root, package_roots), "path": path})  # noqa: E731
    else:
        work = lambda fd: _package_parent(batch, root, package_roots, timeout, fd)  # noqa: E731
    pid, fd = _spawn(work)
    now = time.monotonic()
    return _Task(batch, pid, fd, now, now)


def _read(task: _Task, data: bytes) -> list[dict]:
    *lines, task.buffer = (task.buffer + data).split(b"\n")
    results = [json.loads(line) for line in lines if line]
    task.done.update(r["path"] for r in results)
    task.last = time.monotonic()
    return results


def _end(task: _Task, why: str | None = None) -> list[dict]:
    """Close a task; a module it never answered for crashed (or `why`)."""
    os.close(task.fd)
    _, status = os.waitpid(task.pid, 0)
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    why = why or (f"the import crashed the interpreter (signal {sig})" if sig else "the import ended the interpreter")
    return [
        {"module": module, "path": path, "status": "error", "type": "crash", "error": why}
        for module, _, path in task.items
        if path not in task.done
    ]


def _timed_out(task: _Task, timeout: float, wall: float) -> dict:
    ((module, _, path),) = task.items
    waited = waited_for_cpu(task.pid)
    os.kill(task.pid, signal.SIGKILL)
    os.waitpid(task.pid, 0)
    os.close(task.fd)
    return {
        "module": module,
        "path": path,
        "status": "timeout",
        "error": f"import did not finish within {timeout:g} s of its own time "
        f"({wall:.0f} s since it started, {waited:.0f} s of them waiting for a CPU)",
    }


def run_all(
    items: list[list[str]], root: str, package_roots: list[str], timeout: float, jobs: int, grouped: bool = True
):
    """Yield one result per module, in the order they finish, `jobs` processes at a time."""
    pending = _plan(items, grouped)
    running: dict[int, _Task] = {}
    while pending or running:
        while pending and len(running) < jobs:
            task = _start(pending.pop(), root, package_roots, timeout)
            running[task.fd] = task
        ready, _, _ = select.select(list(running), [], [], _POLL)
        for fd in ready:
            task = running[fd]
            data = os.read(fd, 65536)
            yield from _read(task, data) if data else _end(running.pop(fd))
        now = time.monotonic()
        for fd, task in list(running.items()):
            wall = now - task.started
            if len(task.items) == 1 and wall >= timeout and own_seconds(task.pid, wall) >= timeout:
                yield _timed_out(running.pop(fd), timeout, wall)
            elif len(task.items) > 1 and now - task.last >= _STALLED * timeout:
                os.killpg(task.pid, signal.SIGKILL)  # its modules' own limits failed to end it
                yield from _end(
                    running.pop(fd), f"the package's import parent stopped answering for {now - task.last:.0f} s"
                )


def main() -> None:
    root, timeout, jobs, mode = os.path.realpath(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    package = sys.argv[5] if len(sys.argv) > 5 else "torch_mlu"
    request = json.load(sys.stdin)
    # Results go to the original stdout; whatever the imports print (here or in the children)
    # goes nowhere, so it cannot be mistaken for a result.
    results = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    import torch  # noqa: F401  (the expensive part, shared by every child)

    if mode == "warm":
        __import__(package)  # registers the device, as the modules' own imports would

        preload(request.get("preload", []), timeout)
    for result in run_all(request["modules"], root, request["package_roots"], timeout, jobs):
        results.write(json.dumps(result) + "\n")
        results.flush()


if __name__ == "__main__":
    main()
