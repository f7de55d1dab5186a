"""Run a pure per-file function over many files, in worker processes when it pays.

Both `convert` and `check` do the same thing: a list of (path, bytes, ...) tasks, a
top-level function per task, results in task order. Small trees stay in this process,
because starting a pool costs more than the work.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Tasks smaller than this many bytes in total are not worth a process pool.
POOL_THRESHOLD = 400_000


def map_files(work: Callable[[T], R], tasks: Sequence[T], size: Callable[[T], int],
              jobs: int | None = None, meanwhile: Callable[[], None] | None = None) -> list[R]:
    """`[work(t) for t in tasks]`, spread over `jobs` processes (default: all cores).

    `work` must be a module-level function (it is pickled by name). `size` weighs a task:
    the biggest go first so that one large file does not finish last alone. `meanwhile`
    runs in this process while the workers compute (I/O the parent would otherwise do after).
    """
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(tasks) < 4 or sum(size(t) for t in tasks) < POOL_THRESHOLD:
        if meanwhile is not None:
            meanwhile()
        return [work(t) for t in tasks]
    import multiprocessing  # only here: a run answered from the cache never starts a pool
    from concurrent.futures import ProcessPoolExecutor

    # fork: workers inherit the rules and tables the parent already loaded.
    ctx = multiprocessing.get_context("fork") if hasattr(os, "fork") else None
    order = sorted(range(len(tasks)), key=lambda i: -size(tasks[i]))
    results: list[R | None] = [None] * len(tasks)
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=ctx) as pool:
        pending = pool.map(work, [tasks[i] for i in order], chunksize=1)  # submits everything now
        if meanwhile is not None:
            meanwhile()
        for i, result in zip(order, pending):
            results[i] = result
    return results  # type: ignore[return-value]
