"""`porter convert` as a library call: run the tree, write OUT (or SRC in place) and the
report (where it goes: place.py), and say what was done in a `ConvertReport`.

The copy of SRC into OUT starts first, in its own process; the pipelines, rules and
reports are imported after that, while it runs (they are most of porter's start-up).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from porter.converter.place import ReportPlace, report_place
from porter.converter.report import ConvertReport
from porter.core.model import FileResult, Finding
from porter.core.tree import LORA_FILES, REPORT_FILES
from porter.engine.output import (
    InPlaceJournal,
    TreeWriter,
    check_destination,
    default_out,
    earlier_outputs,
    write_in_place,
)
from porter.run_options import RunOptions

if TYPE_CHECKING:
    from porter.engine.runner import RunResult
    from porter.rules import RuleSet


def patch_bytes(run: RunResult) -> bytes:
    """The unified diff of every changed file, in path order (each made by its worker)."""
    return b"".join(r.diff for r in run.results if r.new_bytes is not None)


def run_convert(src: Path, options: RunOptions) -> ConvertReport:
    """Convert `src` as `options` say: OUT (or SRC itself, in place) gets the ported tree, the
    report folder the report and the LoRA files; with `diff`, nothing is written. Raises
    DestinationError (OUT or the report folder cannot be used) and OSError (naming the
    path) when porter's own output cannot be written."""
    if options.diff:
        rules, run = _converted(src, options, exclude=None)
        run.results += _not_run(rules)
        report = _build_report(run, rules, None)
        return ConvertReport(options.target, options.version, src, None, *_outcome(run), report, patch_bytes(run))
    out = src if options.in_place else options.out or default_out(src, options.target)
    if not options.in_place:
        check_destination(src, out, options.force)
    place = report_place(src, out, options.report_dir, options.in_place)
    # What porter's earlier run wrote into OUT, read before this run writes its report there.
    earlier = earlier_outputs(out) if options.force and not options.in_place else set()
    if options.in_place or options.report_dir is not None:
        # The report folder is made now: one that cannot be made (a read-only parent) stops
        # the run before SRC is rewritten, not after.
        from porter.core.files import open_dir_beneath

        os.close(open_dir_beneath(place.root, place.rel))
    writing: TreeWriter | InPlaceJournal
    removed: list[str] = []
    if options.in_place:
        # Only temporaries a killed run's record proves porter's are removed (never a
        # user's file that merely looks like one).
        writing = InPlaceJournal(place.root, place.rel, src)
        removed = writing.remove_stale()
    else:
        # OUT is written while the files are converted: every file as it is in SRC, by a forked
        # process; the converted ones are written over their copies afterwards.
        writing = TreeWriter(src, out, background=options.jobs != 1)
        writing.start_copy(out.resolve())
    from porter.core.files import remove_stale_temporaries_in
    from porter.engine.parallel import side_by_side
    from porter.lora.render import edited_lora_files, render_lora
    from porter.reports.write import report_steps

    rules, run = _converted(src, options, exclude=None if options.in_place else out.resolve())
    stale: list[str] = []
    unknown: list[str] = []
    if isinstance(writing, TreeWriter):
        writing.write(run.results)
        writing.links(run.symlinks)
        writing.keep_dir_modes([r.path for r in run.results])
        failures = writing.failures
        stale, unknown = writing.settle(earlier, set(run.symlinks) - set(failures), _porters_folders(out, place))
    else:
        failures = _rewrite_src(run, writing)
    # A file SRC would not let porter read cannot be copied either: it is failed already,
    # with the reason that matters (it was never porter's to write).
    unread = {r.path for r in run.results if r.status == "failed" and (r.reason or "").startswith("cannot read")}
    failures = {path: why for path, why in failures.items() if path not in unread}
    if failures:
        _mark_not_written(run, failures)
    run.results += _not_run(rules)
    report = _build_report(run, rules, out)
    constraints = _constraints_step(src, options, report, place)
    patch = patch_bytes(run)
    # The report pages and the LoRA entry point share nothing: each is written by the next free
    # process, the two long ones (report.html, then the LoRA files) first, report.md after them;
    # report.json, which says the report is there, comes last.
    report_pages, finish_report = report_steps(report, patch, place.root, place.rel, options.cache_dir)
    # A train_lora.py the user edited after an earlier run (in <SRC>_porter_report with
    # --in-place, or in OUT with --force) is theirs: kept, and named; `porter lora --force` replaces it.
    kept = tuple(
        edited_lora_files(out, place.lora_dir, options.target, cache_dir=options.cache_dir)
        if os.path.lexists(place.lora_dir)
        else ()
    )  # a first run has nothing there to keep
    lora = partial(
        render_lora, out, place.lora_dir, options.target, cache_dir=options.cache_dir, root=place.root, skip=kept
    )
    side_by_side([*report_pages[:1], lora, constraints, *report_pages[1:]], options.jobs)
    finish_report()
    # What a killed run's writer left there: temporaries of the files porter writes there only.
    for folder, written in ((place.report_dir, REPORT_FILES), (place.lora_dir, LORA_FILES)):
        if not folder.is_symlink():
            remove_stale_temporaries_in(folder, written)
    return ConvertReport(
        options.target,
        options.version,
        src,
        out,
        *_outcome(run),
        report,
        patch,
        place.report_dir,
        place.lora_dir,
        failures,
        tuple(removed),
        tuple(stale),
        tuple(unknown),
        kept,
    )


def _converted(src: Path, options: RunOptions, exclude: Path | None) -> tuple[RuleSet, RunResult]:
    """The rules and the engine's run of every file of `src` (OUT, at `exclude`, left out)."""
    from porter.engine.cache import ResultCache
    from porter.engine.runner import convert_tree
    from porter.rules import ActiveRules, load_rules

    rules = load_rules(options.target, options.rule_files)
    cache = ResultCache(options.cache_dir) if options.cache_dir else None
    _, files = options.files([src])
    run = convert_tree(
        src, ActiveRules(rules, options.selection), options.jobs, exclude, cache, files, options.max_bytes
    )
    return rules, run


def _not_run(rules: RuleSet) -> list[FileResult]:
    """A project codemod that could not be loaded did not run: listed as failed (exit 1) with why."""
    return [
        FileResult(path, "failed", kind="codemod", reason=f"codemod not run: {why}") for path, why in rules.problems
    ]


def _build_report(run: RunResult, rules: RuleSet, out: Path | None) -> dict:
    from porter.reports.json_report import build_report

    return build_report(run, rules, out)


def _outcome(run: RunResult) -> tuple[tuple[FileResult, ...], tuple[Finding, ...]]:
    """Each file's result, and the findings left for a person."""
    return tuple(run.results), tuple(f for r in run.results for f in r.findings)


def _porters_folders(out: Path, place: ReportPlace) -> set[str]:
    """The top-level names of OUT that this run's report and LoRA folders are (or are in)."""
    names: set[str] = set()
    for folder in (place.report_dir, place.lora_dir):
        try:
            names.add(folder.resolve().relative_to(out.resolve()).parts[0])
        except (ValueError, IndexError):
            pass
    return names


def _constraints_step(src: Path, options: RunOptions, report: dict, place: ReportPlace) -> Callable[[], object]:
    """Add the constraints file's derivation to `report` and return the step that writes it
    (porter_report/requirements-<target>.txt, from SRC's own pins and the package table)."""
    from porter.core.files import write_beneath
    from porter.filetypes.constraints import DERIVATION, constraints_file_name, derive_constraints, render_constraints

    name = constraints_file_name(options.target)
    rows = derive_constraints(src, options.target, options.version)
    report["constraints"] = {
        "file": name,
        "derived": DERIVATION,
        "rows": [c.plain() for c in rows],
    }
    text = render_constraints(rows, options.target, options.version)
    rel = f"{place.rel}/{name}" if place.rel else name
    return partial(write_beneath, place.root, rel, text.encode("utf-8"))


def _rewrite_src(run: RunResult, journal: InPlaceJournal) -> dict[str, str]:
    """Write the changed files into SRC (--in-place), recorded in the journal meanwhile (a
    run killed while writing leaves temporaries the next run can prove porter's)."""
    if not any(r.new_bytes is not None for r in run.results):
        return {}
    token = journal.begin()
    try:
        return write_in_place(run, token)
    finally:
        journal.end()


def _mark_not_written(run: RunResult, failures: dict[str, str]) -> None:
    """A file porter could not write is a failure (never "changed"), and its change is not in
    the patch: the patch and the report say what OUT (or SRC) holds."""
    seen = set()
    results: list[FileResult] = []
    for r in run.results:
        why = failures.get(r.path)
        if why is not None:
            seen.add(r.path)
            r = replace(r, status="failed", reason=why, new_bytes=None, diff=b"", edits=())
        results.append(r)
    for path, why in failures.items():
        if path not in seen:  # a symlink
            results.append(FileResult(path, "failed", kind="symlink", reason=why))
    run.results = sorted(results, key=lambda r: r.path)
