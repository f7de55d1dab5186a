"""Check a whole tree: pick the rules, screen files cheaply, check them in parallel.

The parent reads each file once; a Python file goes to a worker only when it names torch
or a word some rule screens for. Nothing is written.
"""

from __future__ import annotations

from pathlib import Path

from porter import filetypes
from porter.check.files import Task, check_file, wants_python
from porter.check.model import CheckResult, FileCheck
from porter.check.options import CheckOptions, rules_for
from porter.parallel import map_files
from porter.tree import LORA_DIR, walk


def check_tree(src: Path, opts: CheckOptions, exclude: Path | None = None) -> CheckResult:
    """Check every file under `src`. Reads only."""
    rules, _ = rules_for(opts)  # fails here, before any work, when a rule is malformed
    results: list[FileCheck] = []
    tasks: list[Task] = []
    for rel in _files(src, exclude):
        try:
            data = (src / rel).read_bytes()
        except OSError as exc:
            results.append(FileCheck(rel, skipped=f"cannot read: {exc.strerror}"))
            continue
        found = filetypes.handler_for(rel, data[:256])
        if found is None or (found[0] == "python" and not wants_python(data, rules)):
            continue
        tasks.append(Task(rel, data, opts))
    results.extend(map_files(check_file, tasks, lambda t: len(t.data), opts.jobs))
    results.sort(key=lambda r: r.path)
    return CheckResult(src, opts.target, opts.version, tuple(results))


def _files(src: Path, exclude: Path | None) -> list[str]:
    """Relative paths of the regular files to check. Unlike convert, porter's own entry
    point (porter_lora/) is checked too: it is code the user will run on the target."""
    rels = [e.rel for e in walk(src, exclude) if not e.is_symlink]
    lora = src / LORA_DIR
    if lora.is_dir() and not lora.is_symlink():
        rels += [f"{LORA_DIR}/{e.rel}" for e in walk(lora, exclude) if not e.is_symlink]
    return rels
