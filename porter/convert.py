"""`porter convert` as a library call: run the tree, write OUT (or SRC in place), write reports.

The copy of SRC into OUT starts first, in its own process; the pipelines, rules and
reports are imported after that, while it runs (they are most of porter's start-up).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from porter.engine.output import TreeWriter, check_destination, default_out
from porter.core.fileset import FileSelection
from porter.core.tree import LORA_DIR, REPORT_DIR

if TYPE_CHECKING:
    from porter.engine.runner import RunResult


@dataclass(frozen=True)
class ConvertOptions:
    target: str
    version: str | None = None
    out: Path | None = None
    in_place: bool = False
    diff_only: bool = False
    force: bool = False
    jobs: int | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    cache_dir: Path | None = None  # None: no cache
    extend: tuple[str, ...] = ()  # extend-select (porter.config)
    files: FileSelection | None = None  # which files are scanned (default: .gitignore respected)
    rule_files: tuple[Path, ...] = ()  # the repository's own rules (`rules` in [tool.porter])


def patch_bytes(run: RunResult) -> bytes:
    """The unified diff of every changed file, in path order (each made by its worker)."""
    return b"".join(r.diff for r in run.results if r.new_bytes is not None)


def convert(src: Path, opts: ConvertOptions) -> tuple[RunResult, dict, Path | None]:
    """Convert `src`; returns the run, the report and where OUT is (None for --diff)."""
    out: Path | None
    if opts.diff_only:
        out = None
    elif opts.in_place:
        out = src
    else:
        out = opts.out or default_out(src, opts.target)
        check_destination(src, out, opts.force)
    exclude = out.resolve() if out is not None and not opts.in_place else None
    # OUT is written while the files are converted: every file as it is in SRC, by a forked
    # process; the converted ones are written over their copies afterwards.
    writer = TreeWriter(src, out, background=opts.jobs != 1) if out is not None and not opts.in_place else None
    if writer is not None:
        writer.start_copy(exclude)
    from porter.engine.cache import ResultCache
    from porter.lora import render_lora
    from porter.engine.output import write_in_place
    from porter.reports.json_report import build_report
    from porter.reports.write import write_reports
    from porter.engine.runner import convert_tree
    from porter.rules import ActiveRules, Selection, load_rules

    rules = load_rules(opts.target, opts.rule_files)
    active = ActiveRules(rules, Selection(opts.version, opts.select, opts.ignore, extend=opts.extend))
    cache = ResultCache(opts.cache_dir) if opts.cache_dir else None
    run = convert_tree(src, active, opts.jobs, exclude, cache, opts.files)
    report = build_report(run, rules, out)
    if out is None:
        return run, report, None
    patch = patch_bytes(run)  # before an in-place write replaces SRC's files
    if writer is not None:
        writer.write(run.results)
        writer.links(run.symlinks)
        problems = writer.problems
    else:
        problems = write_in_place(run)
    for problem in problems:
        print(f"porter: {problem}", file=sys.stderr)
    write_reports(report, patch, out / REPORT_DIR, opts.cache_dir)
    render_lora(out, out / LORA_DIR, opts.target, cache_dir=opts.cache_dir)
    return run, report, out



# `porter.convert(src, target=...)` is the API (porter/api.py); this module stays importable
# as the feature it is. See porter/__init__.py.
from porter import FeatureModule as _FeatureModule  # noqa: E402

sys.modules[__name__].__class__ = _FeatureModule
