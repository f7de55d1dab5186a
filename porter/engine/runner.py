"""Run a whole tree through the engine: one walk, one read, files in parallel, results cached.

`convert_tree` and `check_tree` are the same run with a different per-file step
(porter/engine/pipeline.py): the parent walks SRC and reads every file a pipeline handles
(only the head of the others), files of another vendor are kept with one finding, and the
workers (`--jobs`, default all cores) find and then convert or check each file. Each
pipeline screens its file first: a Python file that names neither torch nor any rule's word
is not even parsed. Writing OUT is output.py's.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from porter.core.fileset import GITIGNORE, FileSelection, LeftOut
from porter.core.git_index import tracked_among, tracked_below
from porter.core.model import FileCheck, FileResult
from porter.core.tree import LORA_DIR, REPORT_DIR, walk
from porter.engine.cache import ResultCache, cache_key, cached_map, content_digest
from porter.engine.reporting import folded_across_files
from porter.engine.kept_constants import kept_constants, to_run_again
from porter.engine.own_modules import with_own_modules
from porter.engine.parallel import NOT_PYTHON, map_files
from porter.engine.tree_index import TreeIndex
from porter.core.limits import MAX_FILE_MB
from porter.engine.sources import TooLarge, read_source, source_kind
from porter.engine.vendor_paths import KIND as VENDOR_KIND, PATH_KINDS, PathView
from porter.filetypes._common import matched
from porter.filetypes.pins import project_off, project_requires
from porter.rules import ActiveRules

R = TypeVar("R")


@dataclass(frozen=True)
class Task:
    """One file for a worker: its path, its file type, the digest of its bytes and the bytes
    themselves, or None when the tree index vouched for the file unread (the worker reads it
    if the result cache has no answer). On a first run (nothing in the index or the cache to
    look up) no digest is known yet ("") and the worker is the first to read the file."""

    root: str
    rel: str
    data: bytes | None
    kind: str
    digest: str
    size: int
    ignore: tuple[str, ...] = ()  # codes per-file-ignores turns off for this file

    def bytes(self) -> bytes:
        if self.data is not None:
            return self.data
        with open(f"{self.root}/{self.rel}", "rb") as fh:
            data = fh.read()
        if self.digest and content_digest(data) != self.digest:  # its result would be stored under the old bytes' key
            raise OSError(errno.EAGAIN, "the file changed while porter ran; run porter again")
        return data


@dataclass
class RunResult:
    src: Path
    target: str
    version: str | None
    results: list[FileResult] = field(default_factory=list)
    symlinks: list[str] = field(default_factory=list)
    left_out: LeftOut = field(default_factory=LeftOut)  # what the file selection left out, and why
    # Those of them git tracks (the project's files all the same); None where no index says.
    left_out_tracked: list[str] | None = None


# The active rules of this run. Workers are forked after the parent sets it, so a task
# carries only a file, never the rules.
_RULES: list[ActiveRules] = []


def _rules(task: Task) -> ActiveRules:
    return _RULES[0].narrowed(task.ignore) if task.ignore else _RULES[0]


def _unreadable_result(rel: str, why: str) -> FileResult:
    return FileResult(rel, "failed", kind="other", reason=why)


def _unreadable_check(rel: str, why: str) -> FileCheck:
    return FileCheck(rel, skipped=why)


# The pipelines (and difflib) load on the first file a run computes: a re-run answered
# from the cache needs neither (~5 ms of imports).
def _convert_bytes(task: Task, data: bytes) -> FileResult:
    from porter.core.patch import file_diff
    from porter.engine.pipeline import convert_file

    result = convert_file(task.rel, data, task.kind, _rules(task))
    # The file's part of changes.patch is made here, in the worker, while both texts are at hand.
    # Its hunks come from the line spans of the edits (porter/core/edit_spans.py).
    spans = [e.span for e in result.edits if e.span is not None]
    diff = (
        file_diff(task.rel, data, result.new_bytes, spans=spans if len(spans) == len(result.edits) else None)
        if result.new_bytes is not None
        else b""
    )
    return replace(result, diff=diff, lines=line_count(data))


def _check_bytes(task: Task, data: bytes) -> FileCheck:
    from porter.engine.pipeline import check_file

    return check_file(task.rel, data, task.kind, _rules(task))


# Per command: what a worker does with a file's bytes, and its answer for a file it cannot read.
_STEPS: dict[str, tuple[Callable[[Task, bytes], object], Callable[[str, str], object]]] = {
    "convert": (_convert_bytes, _unreadable_result),
    "check": (_check_bytes, _unreadable_check),
}


def _work(mode: str, task: Task) -> tuple[Any, str]:  # a FileResult (convert) or FileCheck (check)
    """(result, digest) of one task; the digest only when this read was the file's first (""
    otherwise, and for a file that could not be read)."""
    on_bytes, unreadable = _STEPS[mode]
    try:
        data = task.bytes()
    except OSError as exc:
        return unreadable(task.rel, f"cannot read: {exc.strerror}"), ""
    result = on_bytes(task, data)
    return (result, "") if task.digest else (result, content_digest(data))


def _result(mode: str, task: Task) -> Any:
    """The result of one task alone (the index already knows the file's digest)."""
    return _work(mode, task)[0]


def line_count(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


@dataclass
class _Tree:
    """What the walk found: the tasks, the answers made without a worker, symlinks."""

    tasks: list[Task] = field(default_factory=list)
    early: list = field(default_factory=list)
    symlinks: list[str] = field(default_factory=list)
    left_out: LeftOut = field(default_factory=LeftOut)
    # A first run's files the workers read (see Task), with what stat said of each.
    unread: dict[str, os.stat_result] = field(default_factory=dict)


def _read_tree(
    src: Path,
    rules: ActiveRules,
    exclude: Path | None,
    with_lora: bool,
    unreadable: Callable[[str, str], object],
    other: Callable[[str], object | None],
    kept: Callable[[str, str, object], object],
    skipped: Callable[[str, str], object],
    max_bytes: int | None,
    files: FileSelection | None = None,
    index: TreeIndex | None = None,
    first_read: bool = False,
) -> _Tree:
    """The tree's files as tasks, and the answers made without a worker. With `first_read`
    (nothing in the index or the cache to look up), a file a pipeline handles is not read
    here: its worker reads it, beside the other workers, instead of this process alone."""
    tree = _Tree()
    vendor_rules = rules.of_kind(VENDOR_KIND)
    root = str(src)
    entries: list[str] = []
    index = index or TreeIndex(None, src)
    # The file selection (porter/core/fileset.py): .gitignore, excludes, explicit files.
    chosen = (files or FileSelection()).matcher(src)
    for entry in index.listing(chosen, exclude):
        if entry.failed is not None:
            tree.early.append(unreadable(entry.rel, entry.failed))
        elif entry.skipped is not None:
            # check: porter's LoRA files are checked below, file by file; its report is not code
            if not (with_lora and entry.rel in (LORA_DIR, REPORT_DIR)):
                tree.early.append(skipped(entry.rel, entry.skipped))
        else:
            (tree.symlinks if entry.is_symlink else entries).append(entry.rel)
    tree.left_out = chosen.left_out
    lora = src / LORA_DIR
    if with_lora and chosen.selection.only is None and lora.is_dir() and not lora.is_symlink():
        # porter's own entry point is checked too: it is code the user will run on the target.
        entries += [
            f"{LORA_DIR}/{e.rel}"
            for e in walk(lora, exclude)
            if not e.is_symlink and e.skipped is None and e.failed is None
        ]
    # Every file and folder of the tree: a CUDA path is kept where the tree has its twin for
    # the target (vendor_paths.cuda_counterpart); only a path that names CUDA is looked up.
    present = (
        frozenset(entries) | frozenset(rel.rsplit("/", k)[0] for rel in entries for k in range(1, rel.count("/") + 1))
        if vendor_rules and any("cuda" in rel.lower() for rel in entries)
        else frozenset()
    )
    for rel in entries:
        try:
            st = os.stat(f"{root}/{rel}")
            known, worker_reads = index.seen(rel, st), False
            if known is not None:
                data, (kind, digest) = None, known
            elif first_read and (kind := source_kind(root, rel)[1]) is not None:
                data, digest, worker_reads = None, "", True  # and gives the index its digest
            else:
                data, kind = read_source(root, rel, max_bytes)
                digest = content_digest(data) if kind is not None else ""
                index.record(rel, st, kind, digest)
            if data is None and kind is not None and max_bytes is not None and st.st_size > max_bytes:
                raise TooLarge(st.st_size, max_bytes)
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
        kept_path = matched(PATH_KINDS, PathView(rel, present), rules)
        if kept_path:  # kept whatever the selection; its note shown when selected
            finding = kept_path[0]
            tree.early.append(kept(rel, kind, finding if rules.shows(finding) else None))
            continue
        if worker_reads:
            tree.unread[rel] = st
        tree.tasks.append(Task(root, rel, data, kind, digest, st.st_size, chosen.ignores(rel)))
    return tree


def _context(mode: str, rules: ActiveRules) -> str:
    return f"{mode}|{rules.target}|{rules.key}"  # the key names the rules the project's pins turn off


def _key(task: Task, digest: str, context: str) -> str:
    return cache_key(digest, task.rel, context + (f"|-{','.join(task.ignore)}" if task.ignore else ""))


def _run(
    mode: str,
    tree: _Tree,
    rules: ActiveRules,
    jobs: int | None,
    cache: ResultCache | None,
    keep: Callable[[R], bool],
    index: TreeIndex,
) -> list[R]:
    """The tasks' results: from the cache where it has them, the rest computed in parallel
    (and stored); a first run's workers also say each file's digest, which the index
    records (the caller saves it)."""
    _RULES[:] = [rules]
    context = _context(mode, rules)
    size, bundle = (lambda t: t.size), (lambda t: None if t.kind == "python" else NOT_PYTHON)
    if tree.unread:  # a first run: every task is one (nothing was in the index)
        answers = map_files(partial(_work, mode), tree.tasks, size, jobs, bundle)
        results = [result for result, _ in answers]
        stored = {}
        for task, (result, digest) in zip(tree.tasks, answers):
            if digest:  # read: what the index and the cache keep of it
                index.record(task.rel, tree.unread[task.rel], task.kind, digest)
                if keep(result):
                    stored[_key(task, digest, context)] = result
        if cache is not None and stored:
            cache.put_many(context, stored)
    else:
        keys = [_key(t, t.digest, context) for t in tree.tasks] if cache else []
        results = cached_map(
            partial(_result, mode),
            tree.tasks,
            keys,
            size,
            jobs,
            cache,
            context,
            keep=keep,
            bundle=bundle,
            path_of=lambda t: t.rel,
        )
    return results  # type: ignore[return-value]


def _keep_what_modules_keep(
    mode: str,
    tree: _Tree,
    results: list,
    rules: ActiveRules,
    jobs: int | None,
    cache: ResultCache | None,
    index: TreeIndex,
) -> list:
    """The second step (porter/engine/kept_constants.py): the files that handed a literal to a
    module keeping it as a named constant run again, told which, so that they keep it too."""
    kept = kept_constants(results)
    if not kept:
        return results
    by_path = {task.rel: task for task in tree.tasks}
    read: dict[str, Task] = {}  # each candidate read once: for the screen, then for its run

    def text(rel: str) -> str | None:
        task = by_path.get(rel)
        if task is None:
            return None
        try:
            data = task.bytes()
        except OSError:
            return None  # changed or gone since: its first answer stands
        read[rel] = replace(task, data=data, digest=content_digest(data))
        return data.decode("utf-8", "replace")

    again = to_run_again(results, kept, text)
    if not again:
        return results
    told = replace(rules, kept_constants=frozenset(pair for pairs in kept.values() for pair in pairs))
    tasks = [read[rel] for rel in again]
    redone = {r.path: r for r in _run(mode, _Tree(tasks=tasks), told, jobs, cache, _KEEP[mode], index)}
    return [redone.get(r.path, r) for r in results]


def _first_read(index: TreeIndex, cache: ResultCache | None, mode: str, rules: ActiveRules) -> bool:
    """Nothing to look up: the index knows no file of the tree and the cache has no results
    for this command and these rules (or there is no cache)."""
    return index.empty and (cache is None or not cache.has_packs(_context(mode, rules)))


# Per command, the answers made without a worker: for a file no pipeline handles, another
# vendor's file kept as it is (with its note, when shown) and one skipped (an unreadable one
# is answered as a worker answers it, _STEPS); and whether porter's own LoRA files are
# scanned too (check: it is code the user will run).
_ANSWERS: dict[str, dict] = {
    "convert": {
        "with_lora": False,
        "other": lambda rel: FileResult(rel, "unchanged", kind="other"),
        "kept": lambda rel, kind, finding: FileResult(
            rel, "unchanged", kind=kind, findings=(finding,) if finding else ()
        ),
        "skipped": lambda rel, why: FileResult(rel, "skipped", kind="other", reason=why),
    },
    "check": {
        "with_lora": True,
        "other": lambda rel: FileCheck(rel),
        "kept": lambda rel, kind, finding: FileCheck(rel, kind, (finding,), ("",)) if finding else FileCheck(rel, kind),
        "skipped": lambda rel, why: FileCheck(rel, skipped=why),
    },
}
# Which results the cache keeps: not porter's own failures.
_KEEP: dict[str, Callable] = {"convert": lambda r: r.status != "failed", "check": lambda r: r.error is None}


def _tree_results(
    mode: str,
    src: Path,
    rules: ActiveRules,
    jobs: int | None,
    exclude: Path | None,
    cache: ResultCache | None,
    files: FileSelection | None,
    max_bytes: int | None,
) -> tuple[list, _Tree, ActiveRules]:
    """Every file's result for `mode` (in no particular order), the tree, and the rules it ran."""
    index = TreeIndex(cache.directory if cache is not None else None, src)
    # The tree's own pins, read once (remembered while its pin files are unchanged): the rules
    # they make moot are off.
    rules = project_off(rules, src, index.remembered)
    rules = project_requires(rules, src, index.remembered)  # a rule's words for what the project requires
    rules = with_own_modules(rules, src)  # its own packages named like a library (GPT-NeoX's megatron/)
    tree = _read_tree(
        src,
        rules,
        exclude,
        max_bytes=max_bytes,
        files=files,
        index=index,
        first_read=_first_read(index, cache, mode, rules),
        unreadable=_STEPS[mode][1],
        **_ANSWERS[mode],
    )
    results = tree.early + _run(mode, tree, rules, jobs, cache, _KEEP[mode], index)
    results = _keep_what_modules_keep(mode, tree, results, rules, jobs, cache, index)
    index.save()
    return results, tree, rules


def _tracked(src: Path, left_out: LeftOut) -> list[str] | None:
    """What .gitignore left out that git tracks: read from the index only when it left
    anything out (a clean checkout has nothing else there)."""
    ignored = [path for path, why in left_out.paths if why == GITIGNORE]
    tracked = tracked_below(src) if ignored else None
    return None if tracked is None else tracked_among(ignored, tracked)


def convert_tree(
    src: Path,
    rules: ActiveRules,
    jobs: int | None = None,
    exclude: Path | None = None,
    cache: ResultCache | None = None,
    files: FileSelection | None = None,
    max_bytes: int | None = MAX_FILE_MB * 1024 * 1024,
) -> RunResult:
    """Run every file of `src` through its pipeline. Reads only SRC; writes only the cache.
    Files a pipeline handles that are over `max_bytes` are skipped (copied as they are)."""
    results, tree, rules = _tree_results("convert", src, rules, jobs, exclude, cache, files, max_bytes)
    run = RunResult(
        src,
        rules.target,
        rules.version,
        symlinks=tree.symlinks,
        left_out=tree.left_out,
        left_out_tracked=_tracked(src, tree.left_out),
    )
    run.results = folded_across_files(results, rules)
    return run


def check_tree(
    src: Path,
    rules: ActiveRules,
    jobs: int | None = None,
    exclude: Path | None = None,
    cache: ResultCache | None = None,
    files: FileSelection | None = None,
    max_bytes: int | None = MAX_FILE_MB * 1024 * 1024,
) -> list[FileCheck]:
    """Check every file under `src` (and its porter_lora/). Reads only SRC; writes only the cache."""
    results, _, rules = _tree_results("check", src, rules, jobs, exclude, cache, files, max_bytes)
    return folded_across_files(results, rules)
