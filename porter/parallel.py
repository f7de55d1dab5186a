"""Run a pure per-file function over many files, in forked processes when it pays.

Both `convert` and `check` do the same thing: a list of (path, bytes, ...) tasks, a
top-level function per task, results in task order. Small trees stay in this process,
because starting workers costs more than the work.

Where the OS can fork, porter forks its workers itself instead of using a process pool:
the tasks are already in memory, so a worker inherits them and only its results travel
back (one pickle per worker, not one per file each way); and this process works on the
tasks too, so `--jobs N` keeps N processes busy.
Tasks are handed out one at a time through a pipe of task numbers, largest first: whoever
is free takes the next, so a slow file or a slow disk does not leave the others idle.
"""

from __future__ import annotations

import gc
import os
import pickle
import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Tasks smaller than this many bytes in total are not worth a worker process.
POOL_THRESHOLD = 400_000
_TOKEN = struct.Struct("<I")  # a task number in the pipe
_MAX_TOKENS = 8_192  # fits the smallest pipe buffer (64 KiB) at 4 bytes each, written before forking


def map_files(work: Callable[[T], R], tasks: Sequence[T], size: Callable[[T], int],
              jobs: int | None = None) -> list[R]:
    """`[work(t) for t in tasks]`, spread over `jobs` processes (default: all cores).

    `work` must be a module-level function that returns a picklable result. `size` weighs a
    task: the biggest go first so that one large file does not finish last alone.
    """
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(tasks) < 4 or sum(size(t) for t in tasks) < POOL_THRESHOLD:
        with _fewer_collections():
            return [work(t) for t in tasks]
    order = sorted(range(len(tasks)), key=lambda i: -size(tasks[i]))
    if not hasattr(os, "fork"):
        return _with_pool(work, tasks, order, jobs)
    with _fewer_collections():
        return _with_forks(work, tasks, order, jobs)


class Background:
    """`func()` run in a forked process while this one goes on; `result()` waits for it and
    returns what it returned (it must pickle). Where the OS cannot fork, `func` runs here,
    at once."""

    def __init__(self, func: Callable[[], R]) -> None:
        self._value: object = None
        self._pid = 0
        if not hasattr(os, "fork"):
            self._value = func()
            return
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                os.close(read_end)
                with os.fdopen(write_end, "wb") as fh:
                    pickle.dump(func(), fh, protocol=pickle.HIGHEST_PROTOCOL)
                status = 0
            finally:
                os._exit(status)  # never run this process's clean-up or flush its buffers
        os.close(write_end)
        self._pid, self._read_end, self._func = pid, read_end, func

    def result(self) -> object:
        if self._pid:
            pid, self._pid = self._pid, 0
            try:
                with os.fdopen(self._read_end, "rb") as fh:
                    self._value = pickle.load(fh)
            except Exception:  # the process died: do its work here
                self._value = self._func()
            finally:
                os.waitpid(pid, 0)
        return self._value


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Per-file work allocates a whole syntax tree at a time, and with the default
    thresholds the cycle collector runs through it again and again (~10% of the run),
    though the trees hold no cycles. Objects that exist before the work are frozen (never
    scanned, nor their pages copied in forked workers), and collections come less often."""
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


def _with_forks(work: Callable[[T], R], tasks: Sequence[T], order: list[int], jobs: int) -> list[R]:
    groups = _groups(order)
    todo_r, todo_w = os.pipe()
    os.write(todo_w, b"".join(_TOKEN.pack(g) for g in range(len(groups))))
    workers: list[tuple[int, int]] = []  # (pid, read end of its results pipe)
    try:
        for _ in range(min(jobs, len(tasks)) - 1):
            out_r, out_w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker: take groups until the pipe is empty, send results, exit
                status = 1
                try:
                    os.close(todo_w)
                    os.close(out_r)
                    done = _take(work, tasks, groups, todo_r)
                    with os.fdopen(out_w, "wb") as fh:
                        pickle.dump(done, fh, protocol=pickle.HIGHEST_PROTOCOL)
                    status = 0
                finally:
                    os._exit(status)  # never run the parent's clean-up or flush its buffers
            os.close(out_w)
            workers.append((pid, out_r))
    finally:
        os.close(todo_w)  # with every copy of the write end closed, an empty pipe reads as EOF
    results: dict[int, R] = {}
    try:
        results.update(_take(work, tasks, groups, todo_r))
        for _, out_r in workers:
            with os.fdopen(out_r, "rb", closefd=False) as fh:
                try:
                    results.update(pickle.load(fh))
                except Exception:  # a worker that died: its tasks are computed below
                    pass
    finally:  # also when this process fails: a worker stuck writing gets EPIPE and exits
        os.close(todo_r)
        for pid, out_r in workers:
            os.close(out_r)
            os.waitpid(pid, 0)
    return [results[i] if i in results else work(tasks[i]) for i in range(len(tasks))]


def _groups(order: list[int]) -> list[list[int]]:
    """Task numbers in groups, at most _MAX_TOKENS of them, so all tokens fit the pipe."""
    per = -(-len(order) // _MAX_TOKENS)
    return [order[i:i + per] for i in range(0, len(order), per)]


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


def _with_pool(work: Callable[[T], R], tasks: Sequence[T], order: list[int], jobs: int) -> list[R]:
    """Where there is no fork (Windows): a process pool; workers load rules themselves."""
    from concurrent.futures import ProcessPoolExecutor

    results: list[R | None] = [None] * len(tasks)
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks))) as pool:
        pending = pool.map(work, [tasks[i] for i in order], chunksize=1)  # submits everything now
        for i, result in zip(order, pending):
            results[i] = result
    return results  # type: ignore[return-value]
