"""Work spread over forked processes: `ForkedMap`, and how many processes one task may use.

The engine maps its per-file work over processes (porter/engine/parallel.py). One very large
file is one task, and when the run has cores that nothing else uses (the tree is that one
file, or its other files are done) the file's own pipeline may use them: a Python module
analysed in groups (porter/python/grouped.py) spreads its groups. `task_processes()` says how
many it may use; the engine sets it around the tasks it runs in this process.
"""

from __future__ import annotations

import os
import pickle
import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_TOKEN = struct.Struct("<I")  # a task number in the pipe
_MAX_TOKENS = (
    4_096  # 16 KiB of tokens, written before any reader exists: fits every pipe buffer (macOS starts at 16 KiB)
)
_task_processes = 1


def task_processes() -> int:
    """How many processes one task running in this process may use (1: only this one)."""
    return _task_processes


@contextmanager
def processes_per_task(count: int) -> Iterator[None]:
    """Tasks run inside may use `count` processes (in a forked worker, always 1)."""
    global _task_processes
    old, _task_processes = _task_processes, max(1, count)
    try:
        yield
    finally:
        _task_processes = old


def forked_map(work: Callable[[T], R], tasks: Sequence[T], processes: int) -> list[R]:
    """`[work(t) for t in tasks]` in up to `processes` processes (this one among them), in order."""
    if processes <= 1 or len(tasks) < 2 or not hasattr(os, "fork"):
        return [work(t) for t in tasks]
    return ForkedMap(work, tasks, processes).finish()


class ForkedMap(Generic[T, R]):
    """`[work(t) for t in tasks]`, started now in `jobs - 1` forked workers; `finish()`
    has this process take the tasks left, then collects everything, in task order.

    Between the two, this process is free for other work: the workers go on alone, and
    what they have not taken by then, it does itself. `work` may be any callable (it is
    not pickled); its results must pickle. Where the OS cannot fork, all the work is done
    in `finish()`.
    """

    def __init__(
        self, work: Callable[[T], R], tasks: Sequence[T], jobs: int, groups: list[list[int]] | None = None
    ) -> None:
        self.work, self.tasks = work, tasks
        # Each group of task numbers goes to one process, in this order.
        self.groups = groups if groups is not None else _chunks(list(range(len(tasks))), _MAX_TOKENS)
        self.workers: list[tuple[int, int]] = []  # (pid, read end of its results pipe)
        self.todo_r, todo_w = os.pipe()
        os.write(todo_w, b"".join(_TOKEN.pack(g) for g in range(len(self.groups))))
        try:
            for _ in range(min(jobs, len(tasks)) - 1 if hasattr(os, "fork") else 0):
                out_r, out_w = os.pipe()
                pid = os.fork()
                if pid == 0:  # a worker: take groups until the pipe is empty, send results, exit
                    status = 1
                    global _task_processes
                    _task_processes = 1  # (its tasks run beside the others: no more processes)
                    try:
                        os.close(todo_w)
                        os.close(out_r)
                        done = _take(work, tasks, self.groups, self.todo_r)
                        with os.fdopen(out_w, "wb") as fh:
                            pickle.dump(done, fh, protocol=pickle.HIGHEST_PROTOCOL)
                        status = 0
                    finally:
                        os._exit(status)  # never run the parent's clean-up or flush its buffers
                os.close(out_w)
                self.workers.append((pid, out_r))
        finally:
            os.close(todo_w)  # with every copy of the write end closed, an empty pipe reads as EOF

    def finish(self) -> list[R]:
        results: dict[int, R] = {}
        try:
            with processes_per_task(1):  # (this process's tasks run beside the workers')
                results.update(_take(self.work, self.tasks, self.groups, self.todo_r))
            for _, out_r in self.workers:
                with os.fdopen(out_r, "rb", closefd=False) as fh:
                    try:
                        results.update(pickle.load(fh))
                    except Exception:  # a worker that died: its tasks are computed below
                        pass
        finally:  # also when this process fails: a worker stuck writing gets EPIPE and exits
            os.close(self.todo_r)
            for pid, out_r in self.workers:
                os.close(out_r)
                os.waitpid(pid, 0)
        return [results[i] if i in results else self.work(self.tasks[i]) for i in range(len(self.tasks))]


def _chunks(order: list[int], most: int) -> list[list[int]]:
    """`order` cut into at most `most` consecutive groups."""
    per = max(1, -(-len(order) // max(1, most)))
    return [order[i : i + per] for i in range(0, len(order), per)]


def _take(work: Callable[[T], R], tasks: Sequence[T], groups: list[list[int]], todo_r: int) -> list[tuple[int, R]]:
    """Compute the groups whose numbers this process reads from the pipe until it is empty.
    A read of 4 bytes from a pipe is atomic, so each group goes to exactly one process."""
    done: list[tuple[int, R]] = []
    while True:
        token = os.read(todo_r, _TOKEN.size)
        if len(token) < _TOKEN.size:
            return done
        for i in groups[_TOKEN.unpack(token)[0]]:
            done.append((i, work(tasks[i])))
