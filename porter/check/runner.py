"""Check a whole tree: pick the rules, check every file a pipeline handles in parallel.

The parent reads each file once; the workers screen and check them (a Python file that
names neither torch nor any rule's word is not parsed). Nothing is written.
"""

from __future__ import annotations

from pathlib import Path

from porter.cache import ResultCache, cache_key, cached_map
from porter.check.files import Task, check_file
from porter.check.model import CheckResult, FileCheck, decode_file_check, encode_file_check
from porter.check.options import CheckOptions, rules_for
from porter.parallel import NOT_PYTHON
from porter.sources import read_source
from porter.tree import LORA_DIR, walk


def check_tree(src: Path, opts: CheckOptions, exclude: Path | None = None, cache_dir: Path | None = None) -> CheckResult:
    """Check every file under `src`. Reads only SRC; with `cache_dir`, reuses and stores per-file results."""
    rules, _ = rules_for(opts)  # fails here, before any work, when a rule is malformed
    results: list[FileCheck] = []
    tasks: list[Task] = []
    root = str(src)
    for rel in _files(src, exclude):
        try:
            data, kind = read_source(root, rel)
        except OSError as exc:
            results.append(FileCheck(rel, skipped=f"cannot read: {exc.strerror}"))
            continue
        if kind is not None:
            tasks.append(Task(rel, data, opts, kind))
    cache = ResultCache(cache_dir, encode_file_check, decode_file_check) if cache_dir else None
    context = f"check|{opts.target}|{rules.digest}|{opts.version}|{','.join(opts.select)}|{','.join(opts.ignore)}|{opts.ops_only}"
    keys = [cache_key(t.data, t.rel, context) for t in tasks] if cache else []
    results.extend(cached_map(check_file, tasks, keys, lambda t: len(t.data), opts.jobs, cache, context,
                              keep=lambda r: r.error is None,
                              bundle=lambda t: None if t.kind == "python" else NOT_PYTHON))
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
