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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from porter.core.forked import _MAX_TOKENS, ForkedMap, _chunks, processes_per_task
from porter.core.progress import counted

T = TypeVar("T")
R = TypeVar("R")

# The bundle of every file that is not Python: their pipelines share the libraries they
# load on first use (YAML, packaging, tree-sitter), which one worker then loads alone.
NOT_PYTHON = "not-python"
# Tasks smaller than this many bytes in total are not worth a worker process.
POOL_THRESHOLD = 400_000


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
        # (in this process alone, a task may use the cores the run has: one very large file)
        with _fewer_collections(), processes_per_task(jobs):
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


def _with_pool(work: Callable[[T], R], tasks: Sequence[T], order: list[int], jobs: int) -> list[R]:
    """Where there is no fork (Windows): a process pool; workers load rules themselves."""
    from concurrent.futures import ProcessPoolExecutor

    results: list[R | None] = [None] * len(tasks)
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks))) as pool:
        pending = pool.map(work, [tasks[i] for i in order], chunksize=1)  # submits everything now
        for i, result in zip(order, pending):
            results[i] = result
    return results  # type: ignore[return-value]
