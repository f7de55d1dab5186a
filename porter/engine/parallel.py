"""Run a pure per-file function over many files, in forked processes when it pays.

Both `convert` and `check` do the same thing: a list of (path, bytes, ...) tasks, a
top-level function per task, results in task order. Small trees stay in this process,
because starting workers costs more than the work.

Where the OS can fork, porter forks its workers itself instead of using a process pool:
the tasks are already in memory, so a worker inherits them and only its results travel
back (one pickle per worker, not one per file each way); and this process works on the
tasks too, so `--jobs N` keeps N processes busy. Tasks are handed out through a pipe of
task numbers, bundles first (files whose pipeline loads a library: one process loads it),
then the largest: whoever is free takes the next, so a slow file or a slow disk does not
leave the others idle. `ForkedMap` starts workers and lets this process do something else
before it joins them (output.py copies the tree that way).
"""

from __future__ import annotations

import gc
import os
import pickle
import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Generic, TypeVar

from porter.core.progress import counted

T = TypeVar("T")
R = TypeVar("R")

# The bundle of every file that is not Python: their pipelines share the libraries they
# load on first use (YAML, packaging, tree-sitter), which one worker then loads alone.
NOT_PYTHON = "not-python"
# Tasks smaller than this many bytes in total are not worth a worker process.
POOL_THRESHOLD = 400_000
_TOKEN = struct.Struct("<I")  # a task number in the pipe
_MAX_TOKENS = (
    4_096  # 16 KiB of tokens, written before any reader exists: fits every pipe buffer (macOS starts at 16 KiB)
)


def map_files(
    work: Callable[[T], R],
    tasks: Sequence[T],
    size: Callable[[T], int],
    jobs: int | None = None,
    bundle: Callable[[T], str | None] = lambda t: None,
) -> list[R]:
    """`[work(t) for t in tasks]`, spread over `jobs` processes (default: all cores).

    `work` must be a module-level function that returns a picklable result. `size` weighs a
    task: the biggest go first so that one large file does not finish last alone.
    `bundle(task)` names tasks that go to one process together: files whose pipeline loads
    a library on first use (the YAML parser, `packaging`), so that one process pays for
    loading it, not every one. Bundles are handed out first.
    """
    jobs = jobs or os.cpu_count() or 1
    # Each finished task counted on the command's progress line, where one is drawn; a pool's
    # work is pickled, so there (no fork: Windows) it goes uncounted.
    counting = counted(work, len(tasks))
    if jobs <= 1 or len(tasks) < 4 or sum(size(t) for t in tasks) < POOL_THRESHOLD:
        with _fewer_collections():
            return [counting(t) for t in tasks]
    groups = _plan(tasks, size, bundle)
    if not hasattr(os, "fork"):
        return _with_pool(work, tasks, [i for g in groups for i in g], jobs)
    with _fewer_collections():
        return ForkedMap(counting, tasks, jobs, groups).finish()


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


def side_by_side(steps: Sequence[Callable[[], object]], jobs: int | None = None) -> None:
    """Run independent steps (each writes its own files), one per process where the OS can
    fork and `jobs` allows. What a step raises is raised here, the first failing step's in
    step order, as when they run one after another: which process met its failure first
    must not decide what a run reports (a full disk fails report.html and the LoRA files
    alike; the one named depended on which process took which step)."""
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(steps) < 2 or not hasattr(os, "fork"):
        for step in steps:
            step()
        return
    failed = [e for e in ForkedMap(_call, steps, min(jobs, len(steps))).finish() if e is not None]
    if failed:
        raise failed[0]


def _call(step: Callable[[], object]) -> Exception | None:
    """The step's error, returned (from a worker, pickled; one that does not pickle loses the
    worker's results, and its steps run again here)."""
    try:
        step()
    except Exception as exc:
        return exc
    return None


def _plan(tasks: Sequence[T], size: Callable[[T], int], bundle: Callable[[T], str | None]) -> list[list[int]]:
    """Groups of task numbers in the order they are handed out: the bundles, then every
    other task on its own, biggest first; at most _MAX_TOKENS groups, so all tokens fit
    the pipe."""
    order = sorted(range(len(tasks)), key=lambda i: -size(tasks[i]))
    bundles: dict[str, list[int]] = {}
    singles: list[int] = []
    for i in order:
        name = bundle(tasks[i])
        if name is None:
            singles.append(i)
        else:
            bundles.setdefault(name, []).append(i)
    return list(bundles.values()) + _chunks(singles, _MAX_TOKENS - len(bundles))


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


def _with_pool(work: Callable[[T], R], tasks: Sequence[T], order: list[int], jobs: int) -> list[R]:
    """Where there is no fork (Windows): a process pool; workers load rules themselves."""
    from concurrent.futures import ProcessPoolExecutor

    results: list[R | None] = [None] * len(tasks)
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks))) as pool:
        pending = pool.map(work, [tasks[i] for i in order], chunksize=1)  # submits everything now
        for i, result in zip(order, pending):
            results[i] = result
    return results  # type: ignore[return-value]
