"""Convert a whole tree: screen cheaply, convert files in parallel, collect results.

The parent process reads every file once and screens it with one bytes regex; only files
that may need an edit go to the workers (`--jobs`, default all cores). Everything else is
copied as it is.
"""

from __future__ import annotations

import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from porter import filetypes
from porter.model import FileResult
from porter.pyconvert import screen_pattern
from porter.rules import RuleSet
from porter.tree import walk

# Files smaller than this many bytes in total are not worth a process pool.
_POOL_THRESHOLD = 400_000


@dataclass
class RunResult:
    src: Path
    target: str
    version: str | None
    results: list[FileResult] = field(default_factory=list)
    symlinks: list[str] = field(default_factory=list)


def _work(args: tuple) -> FileResult:
    rel, data, rules, version, select, ignore = args
    found = filetypes.handler_for(rel, data[:256])
    if found is None:
        return FileResult(rel, "unchanged", kind="other")
    kind, handler = found
    try:
        result = handler(rel, data, rules, version, select, ignore)
    except Exception as exc:  # a porter bug must not stop the run: report it for this file
        return FileResult(rel, "failed", kind=kind, reason=f"internal error: {type(exc).__name__}: {exc}")
    return FileResult(result.path, result.status, kind, result.edits, result.findings, result.reason, result.new_bytes)


def convert_tree(src: Path, rules: RuleSet, version: str | None = None, jobs: int | None = None,
                 select: tuple = (), ignore: tuple = (), exclude: Path | None = None) -> RunResult:
    """Run every file of `src` through its pipeline. Reads only; writes nothing."""
    run = RunResult(src, rules.target, version)
    screen = re.compile(screen_pattern(rules).pattern.encode())
    todo: list[tuple] = []
    for entry in walk(src, exclude):
        if entry.is_symlink:
            run.symlinks.append(entry.rel)
            continue
        path = src / entry.rel
        try:
            data = path.read_bytes()
        except OSError as exc:
            run.results.append(FileResult(entry.rel, "failed", kind="other", reason=f"cannot read: {exc.strerror}"))
            continue
        found = filetypes.handler_for(entry.rel, data[:256])
        if found is None:
            run.results.append(FileResult(entry.rel, "unchanged", kind="other"))
        elif found[0] == "python" and not screen.search(data):
            run.results.append(FileResult(entry.rel, "unchanged", kind="python"))
        else:
            todo.append((entry.rel, data, rules, version, select, ignore))
    run.results.extend(_map(todo, jobs))
    run.results.sort(key=lambda r: r.path)
    return run


def _map(todo: list[tuple], jobs: int | None) -> list[FileResult]:
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(todo) < 4 or sum(len(t[1]) for t in todo) < _POOL_THRESHOLD:
        return [_work(t) for t in todo]
    ctx = multiprocessing.get_context("fork") if hasattr(os, "fork") else None
    with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=ctx) as pool:
        # Big files first so that one large file does not finish last alone.
        order = sorted(range(len(todo)), key=lambda i: -len(todo[i][1]))
        results = list(pool.map(_work, [todo[i] for i in order], chunksize=1))
    return results
