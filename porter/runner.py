"""Convert a whole tree: read it, convert the files some pipeline handles in parallel.

The parent process reads every file a pipeline handles (only the head of the others) and
hands them to the workers (`--jobs`, default all cores), with results cached per file.
Each pipeline screens its file first: a Python file that names neither torch nor any
rule's word is not even parsed. Writing OUT is output.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from porter import filetypes
from porter.cache import ResultCache, cache_key, cached_map
from porter.model import FileResult
from porter.parallel import NOT_PYTHON
from porter.pyconvert import active_rules
from porter.reports.patch import file_diff
from porter.rules import RuleSet, load_rules
from porter.sources import read_source
from porter.tree import walk
from porter.vendor_paths import KIND as VENDOR_KIND, kept_result, vendor_word


@dataclass
class RunResult:
    src: Path
    target: str
    version: str | None
    results: list[FileResult] = field(default_factory=list)
    symlinks: list[str] = field(default_factory=list)


# Rule sets by digest. Workers are forked after the parent fills this, so a task carries
# only the digest instead of pickling the whole rule set once per file.
_RULESETS: dict[str, RuleSet] = {}


def _work(args: tuple) -> FileResult:
    rel, data, kind, (target, digest), version, select, ignore = args
    rules = _RULESETS.get(digest) or load_rules(target)  # spawned workers load their own
    try:
        result = filetypes.handler(kind)(rel, data, rules, version, select, ignore)
    except Exception as exc:  # a porter bug must not stop the run: report it for this file
        return FileResult(rel, "failed", kind=kind, reason=f"internal error: {type(exc).__name__}: {exc}")
    # The file's part of changes.patch is made here, in the worker, while both texts are at hand.
    diff = file_diff(rel, data, result.new_bytes) if result.new_bytes is not None else b""
    return replace(result, kind=kind, diff=diff)


def convert_tree(src: Path, rules: RuleSet, version: str | None = None, jobs: int | None = None,
                 select: tuple = (), ignore: tuple = (), exclude: Path | None = None,
                 cache: ResultCache | None = None) -> RunResult:
    """Run every file of `src` through its pipeline. Reads only SRC; writes only the cache."""
    run = RunResult(src, rules.target, version)
    _RULESETS[rules.digest] = rules
    context = f"{rules.target}|{rules.digest}|{version}|{','.join(select)}|{','.join(ignore)}"
    active = active_rules(rules, version, select, ignore)
    vendor_rules = [r for r in active if r.kind == VENDOR_KIND]
    todo: list[tuple] = []
    lines: dict[str, int] = {}  # line counts of the files a pipeline reads (text), for the report
    root = str(src)
    for entry in walk(src, exclude):
        if entry.is_symlink:
            run.symlinks.append(entry.rel)
            continue
        try:
            data, kind = read_source(root, entry.rel)
        except OSError as exc:
            run.results.append(FileResult(entry.rel, "failed", kind="other", reason=f"cannot read: {exc.strerror}"))
            continue
        if kind is None:
            run.results.append(FileResult(entry.rel, "unchanged", kind="other"))
            continue
        vendor = vendor_word(entry.rel, vendor_rules)
        if vendor is not None:
            run.results.append(kept_result(entry.rel, kind, *vendor))
            continue
        lines[entry.rel] = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        todo.append((entry.rel, data, kind, (rules.target, rules.digest), version, select, ignore))
    keys = [cache_key(t[1], t[0], context) for t in todo] if cache else []
    run.results.extend(cached_map(_work, todo, keys, lambda t: len(t[1]), jobs, cache, context,
                                  keep=lambda r: r.status != "failed",
                                  bundle=lambda t: None if t[2] == "python" else NOT_PYTHON))
    run.results = sorted((replace(r, lines=lines.get(r.path, 0)) for r in run.results), key=lambda r: r.path)
    return run
