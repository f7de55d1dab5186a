"""Import every module of a ported tree under the emulator, quickly, and confirm failures alone.

Two import harnesses (harness.py) run side by side: a warm one, which imports the tree's
third-party modules once and then forks a child per module, several at a time, and a cold
one (torch only) for the few modules that name "mlu" before importing torch_mlu, or "npu"
before torch_npu (preload.py says which). A module whose import failed or timed out is then imported once
more, alone, in a cold harness: its failure must not come from what the warm parent had
imported, and a timeout must not come from sharing the CPU. The second answer is the one
reported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from porter.emulator import environment
from porter.emulator.targets import emulated
from porter.verify.guards import needed_package
from porter.verify.modules import Module, own_top_names, package_roots
from porter.verify.preload import preload_names, read_sources, starts_cold
from porter.verify.progress import Progress

# Extra seconds a harness may take beyond its modules' limits before it counts as stuck
# (starting Python, importing torch, the preload).
_HARNESS_SLACK = 600.0


def _harness(
    root: str,
    modules: list[Module],
    roots: list[str],
    preload: list[str],
    mode: str,
    jobs: int,
    timeout: float,
    version: str | None,
    each: Callable[[dict], None],
    target: str,
) -> list[dict]:
    package = emulated(target).package
    cmd = [sys.executable, "-m", "porter.verify.harness", root, str(timeout), str(jobs), mode, package]
    env = environment(1, version, own_devices=True, target=target)
    env.update(OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")
    payload = json.dumps(
        {"modules": [[m.name, m.path_entry, m.rel] for m in modules], "package_roots": roots, "preload": preload}
    )
    results: list[dict] = []
    with tempfile.TemporaryFile("w+") as errors:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, env=env, text=True)
        watchdog = threading.Timer(timeout * (len(modules) + len(preload)) + _HARNESS_SLACK, proc.kill)
        watchdog.start()
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(payload)
            proc.stdin.close()
            for line in proc.stdout:
                if line.startswith("{"):
                    results.append(json.loads(line))
                    each(results[-1])
            proc.wait()
        finally:
            watchdog.cancel()
        errors.seek(0)
        why = "the import harness failed: " + " | ".join(errors.read().strip().splitlines()[-3:])
    done = {r["path"] for r in results}
    for m in modules:
        if m.rel not in done:
            results.append({"module": m.name, "path": m.rel, "status": "error", "type": "harness", "error": why})
            each(results[-1])
    return results


def _to_confirm(result: dict) -> bool:
    """A failure that might be the warm parent's or the busy machine's doing."""
    return result["status"] == "timeout" or (result["status"] == "error" and needed_package(result) is None)


class _Counter:
    """Counts results as the harnesses' reader threads hand them in, and shows the count."""

    def __init__(self, progress: Progress, what: str, total: int) -> None:
        self._progress, self._what, self._total, self._done = progress, what, total, 0
        self._lock = threading.Lock()
        progress.count(what, 0, total, part="imports")

    def __call__(self, _: dict) -> None:
        with self._lock:
            self._done += 1
            self._progress.count(self._what, self._done, self._total, part="imports")


def import_modules(
    root: Path,
    modules: list[Module],
    version: str | None,
    timeout: float,
    jobs: int | None,
    progress: Progress | None = None,
    target: str = "mlu",
) -> list[dict]:
    """One result per module, imported under `target`'s emulator, sorted by file; a result
    confirmed alone keeps its first answer under "first"."""
    progress = progress or Progress(enabled=False)
    sources = read_sources(root, [m.rel for m in modules])
    cold = [m for m in modules if starts_cold(sources[m.rel], target)]
    warm = [m for m in modules if m not in set(cold)]
    preload = preload_names({m.rel: sources[m.rel] for m in warm}, own_top_names(modules), emulated(target).package)
    roots = package_roots(modules)
    jobs = max(1, min(jobs or os.cpu_count() or 1, 4))
    count = _Counter(progress, "modules", len(modules))
    runs = [
        (group, names, mode, n)
        for group, names, mode, n in ((warm, preload, "warm", jobs), (cold, [], "cold", 1))
        if group
    ]
    with ThreadPoolExecutor(len(runs) or 1) as pool:
        found = pool.map(
            lambda run: _harness(str(root), run[0], roots, run[1], run[2], run[3], timeout, version, count, target),
            runs,
        )
        by_path = {r["path"]: r for rs in found for r in rs}
    again = [m for m in modules if _to_confirm(by_path[m.rel])]
    if again:
        count = _Counter(progress, "failed modules again, alone", len(again))
        for r in _harness(str(root), again, roots, [], "cold", 1, timeout, version, count, target):
            r["first"] = {k: by_path[r["path"]].get(k) for k in ("status", "error")}
            by_path[r["path"]] = r
    progress.drop("imports")
    return sorted(by_path.values(), key=lambda r: r["path"])
