"""Run a whole tree through the engine: one walk, one read, files in parallel, results cached.

`convert_tree` and `check_tree` are the same run with a different per-file step
(porter/engine/pipeline.py): the parent walks SRC and reads every file a pipeline handles
(only the head of the others), files of another vendor are kept with one finding, and the
workers (`--jobs`, default all cores) find and then convert or check each file. Each
pipeline screens its file first: a Python file that names neither torch nor any rule's word
is not even parsed. Writing OUT is output.py's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from porter.core.fileset import FileSelection
from porter.core.model import FileCheck, FileResult
from porter.core.tree import LORA_DIR, REPORT_DIR, walk
from porter.engine.cache import ResultCache, cache_key, cached_map
from porter.engine.parallel import NOT_PYTHON
from porter.engine.pipeline import check_file, convert_file
from porter.engine.sources import MAX_FILE_MB, TooLarge, read_source
from porter.engine.vendor_paths import KIND as VENDOR_KIND, kept_finding, vendor_word
from porter.filetypes.pins import project_off
from porter.core.patch import file_diff
from porter.rules import ActiveRules

R = TypeVar("R")


@dataclass(frozen=True)
class Task:
    """One file for a worker: its path, its bytes and its file type."""

    rel: str
    data: bytes
    kind: str
    ignore: tuple[str, ...] = ()  # codes per-file-ignores turns off for this file


@dataclass
class RunResult:
    src: Path
    target: str
    version: str | None
    results: list[FileResult] = field(default_factory=list)
    symlinks: list[str] = field(default_factory=list)


# The active rules of this run. Workers are forked after the parent sets it, so a task
# carries only a file, never the rules.
_RULES: list[ActiveRules] = []


def _rules(task: Task) -> ActiveRules:
    return _RULES[0].narrowed(task.ignore) if task.ignore else _RULES[0]


def _convert(task: Task) -> FileResult:
    result = convert_file(task.rel, task.data, task.kind, _rules(task))
    # The file's part of changes.patch is made here, in the worker, while both texts are at hand.
    diff = file_diff(task.rel, task.data, result.new_bytes) if result.new_bytes is not None else b""
    return replace(result, diff=diff)


def _check(task: Task) -> FileCheck:
    return check_file(task.rel, task.data, task.kind, _rules(task))


@dataclass
class _Tree:
    """What the walk found: the tasks, the answers made without a worker, symlinks, line counts."""

    tasks: list[Task] = field(default_factory=list)
    early: list = field(default_factory=list)
    symlinks: list[str] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)


def _read_tree(src: Path, rules: ActiveRules, exclude: Path | None, with_lora: bool,
               unreadable: Callable[[str, str], object], other: Callable[[str], object | None],
               kept: Callable[[str, str, object], object], skipped: Callable[[str, str], object],
               max_bytes: int | None, files: FileSelection | None = None) -> _Tree:
    tree = _Tree()
    vendor_rules = rules.of_kind(VENDOR_KIND)
    root = str(src)
    entries: list[str] = []
    # The file selection (porter/core/fileset.py): .gitignore, excludes, explicit files.
    chosen = (files or FileSelection()).matcher(src)
    for entry in chosen.entries(exclude):
        if entry.failed is not None:
            tree.early.append(unreadable(entry.rel, entry.failed))
        elif entry.skipped is not None:
            # check: porter's LoRA files are checked below, file by file; its report is not code
            if not (with_lora and entry.rel in (LORA_DIR, REPORT_DIR)):
                tree.early.append(skipped(entry.rel, entry.skipped))
        else:
            (tree.symlinks if entry.is_symlink else entries).append(entry.rel)
    lora = src / LORA_DIR
    if with_lora and chosen.selection.only is None and lora.is_dir() and not lora.is_symlink():
        # porter's own entry point is checked too: it is code the user will run on the target.
        entries += [f"{LORA_DIR}/{e.rel}" for e in walk(lora, exclude)
                    if not e.is_symlink and e.skipped is None and e.failed is None]
    for rel in entries:
        try:
            data, kind = read_source(root, rel, max_bytes)
        except OSError as exc:
            tree.early.append(unreadable(rel, f"cannot read: {exc.strerror}"))
            continue
        except TooLarge as exc:
            tree.early.append(skipped(rel, exc.reason))
            continue
        if kind is None:
            answer = other(rel)
            if answer is not None:
                tree.early.append(answer)
            continue
        vendor = vendor_word(rel, vendor_rules)
        if vendor is not None:  # kept whatever the selection; its note shown when selected
            finding = kept_finding(rel, *vendor)
            tree.early.append(kept(rel, kind, finding if rules.shows(finding) else None))
            continue
        tree.lines[rel] = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        tree.tasks.append(Task(rel, data, kind, chosen.ignores(rel)))
    return tree


def _run(work: Callable[[Task], R], tree: _Tree, rules: ActiveRules, mode: str, jobs: int | None,
         cache: ResultCache | None, keep: Callable[[R], bool]) -> list[R]:
    _RULES[:] = [rules]
    context = f"{mode}|{rules.target}|{rules.key}"  # the key names the rules the project's pins turn off
    keys = [cache_key(t.data, t.rel, context + (f"|-{','.join(t.ignore)}" if t.ignore else "")) for t in tree.tasks] if cache else []
    return cached_map(work, tree.tasks, keys, lambda t: len(t.data), jobs, cache, context, keep=keep,
                      bundle=lambda t: None if t.kind == "python" else NOT_PYTHON, path_of=lambda t: t.rel)


def convert_tree(src: Path, rules: ActiveRules, jobs: int | None = None, exclude: Path | None = None,
                 cache: ResultCache | None = None, files: FileSelection | None = None,
                 max_bytes: int | None = MAX_FILE_MB * 1024 * 1024) -> RunResult:
    """Run every file of `src` through its pipeline. Reads only SRC; writes only the cache.
    Files a pipeline handles that are over `max_bytes` are skipped (copied as they are)."""
    rules = project_off(rules, src)  # the tree's own pins, read once: rules they make moot are off
    tree = _read_tree(
        src, rules, exclude, with_lora=False,
        unreadable=lambda rel, why: FileResult(rel, "failed", kind="other", reason=why),
        other=lambda rel: FileResult(rel, "unchanged", kind="other"),
        kept=lambda rel, kind, finding: FileResult(rel, "unchanged", kind=kind, findings=(finding,) if finding else ()),
        skipped=lambda rel, why: FileResult(rel, "skipped", kind="other", reason=why),
        max_bytes=max_bytes,
        files=files,
    )
    results = tree.early + _run(_convert, tree, rules, "convert", jobs, cache, keep=lambda r: r.status != "failed")
    run = RunResult(src, rules.target, rules.version, symlinks=tree.symlinks)
    run.results = sorted((replace(r, lines=tree.lines.get(r.path, 0)) for r in results), key=lambda r: r.path)
    return run


def check_tree(src: Path, rules: ActiveRules, jobs: int | None = None, exclude: Path | None = None,
               cache: ResultCache | None = None, files: FileSelection | None = None,
               max_bytes: int | None = MAX_FILE_MB * 1024 * 1024) -> list[FileCheck]:
    """Check every file under `src` (and its porter_lora/). Reads only SRC; writes only the cache."""
    rules = project_off(rules, src)  # the tree's own pins, read once: rules they make moot are off
    tree = _read_tree(
        src, rules, exclude, with_lora=True,
        unreadable=lambda rel, why: FileCheck(rel, skipped=why),
        other=lambda rel: FileCheck(rel),
        kept=lambda rel, kind, finding: FileCheck(rel, kind, (finding,), ("",)) if finding else FileCheck(rel, kind),
        skipped=lambda rel, why: FileCheck(rel, skipped=why),
        max_bytes=max_bytes,
        files=files,
    )
    results = tree.early + _run(_check, tree, rules, "check", jobs, cache, keep=lambda r: r.error is None)
    return sorted(results, key=lambda r: r.path)
