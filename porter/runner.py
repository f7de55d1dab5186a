"""Convert a whole tree: screen cheaply, convert files in parallel, collect results.

The parent process reads every file once and screens it with one bytes regex; only files
that may need an edit go to the workers (`--jobs`, default all cores). Everything else is
copied as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from porter import filetypes
from porter.cache import ResultCache, cache_key, cached_map
from porter.model import FileResult
from porter.pyconvert import active_rules, bytes_screen
from porter.reports.patch import file_diff
from porter.rules import RuleSet, load_rules
from porter.sources import HEAD, read_source
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
    rel, data, (target, digest), version, select, ignore = args
    rules = _RULESETS.get(digest) or load_rules(target)  # spawned workers load their own
    found = filetypes.handler_for(rel, data[:256])
    if found is None:
        return FileResult(rel, "unchanged", kind="other")
    kind, handler = found
    try:
        result = handler(rel, data, rules, version, select, ignore)
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
    ops = any(r.kind == "op-table" for r in active)
    vendor_rules = [r for r in active if r.kind == VENDOR_KIND]
    todo: list[tuple] = []
    python: set[str] = set()
    kinds: dict[str, str] = {}  # file type by path: other types go to workers in bundles
    lines: dict[str, int] = {}  # line counts of the files a pipeline reads (text), for the report
    root = str(src)
    for entry in walk(src, exclude):
        if entry.is_symlink:
            run.symlinks.append(entry.rel)
            continue
        try:
            data, whole = read_source(root, entry.rel)
        except OSError as exc:
            run.results.append(FileResult(entry.rel, "failed", kind="other", reason=f"cannot read: {exc.strerror}"))
            continue
        found = filetypes.handler_for(entry.rel, data[:HEAD]) if whole else None
        if found is None:
            run.results.append(FileResult(entry.rel, "unchanged", kind="other"))
            continue
        vendor = vendor_word(entry.rel, vendor_rules)
        if vendor is not None:
            run.results.append(kept_result(entry.rel, found[0], *vendor))
            continue
        lines[entry.rel] = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        if found[0] == "python":
            python.add(entry.rel)
        kinds[entry.rel] = found[0]
        todo.append((entry.rel, data, (rules.target, rules.digest), version, select, ignore))

    def screened_out(task: tuple) -> FileResult | None:
        """A Python file no rule can fire on: unchanged, without parsing it. (`in` is a C
        substring search; the screen regex, compiled on first use, runs where it cannot decide.)"""
        rel, data = task[0], task[1]
        if rel in python and not (ops and b"torch" in data) and not bytes_screen(rules).search(data):
            return FileResult(rel, "unchanged", kind="python")
        return None

    keys = [cache_key(t[1], t[0], context) for t in todo] if cache else []
    run.results.extend(cached_map(_work, todo, keys, lambda t: len(t[1]), jobs, cache, context,
                                  keep=lambda r: r.status != "failed", quick=screened_out,
                                  bundle=lambda t: None if t[0] in python else kinds[t[0]]))
    run.results = sorted((replace(r, lines=lines.get(r.path, 0)) for r in run.results), key=lambda r: r.path)
    return run
