"""`porter convert` as a library call: run the tree, write OUT (or SRC in place), write reports.

The copy of SRC into OUT starts first, in its own process; the pipelines, rules and
reports are imported after that, while it runs (they are most of porter's start-up).

Where the report goes: `OUT/porter_report/` and `OUT/porter_lora/` by default; with
`--report-dir DIR` the report files in DIR and the LoRA files in `DIR/porter_lora/`; with
`--in-place` (no --report-dir) in SRC's sibling `<SRC>_porter_report/`, never in SRC. A
`porter_report` or `porter_lora` in SRC that porter did not write is the user's: porter
refuses to write over it and names it (`--report-dir` writes elsewhere). No report or LoRA
file is ever written through a symbolic link (core.files.write_beneath).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING

from porter.core.fileset import FileSelection
from porter.core.tree import LORA_DIR, LORA_FILES, REPORT_DIR, REPORT_FILES, porters_own
from porter.engine.output import DestinationError, TreeWriter, check_destination, default_out, earlier_outputs

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
    report_dir: Path | None = None  # None: OUT/porter_report (in place: <SRC>_porter_report)
    max_bytes: int | None = 10 * 1024 * 1024  # larger files a pipeline handles are skipped


@dataclass(frozen=True)
class ReportPlace:
    """Where the report and the LoRA files go: folders `rel` and `lora_rel` below `root`,
    reached without following any link below `root`."""

    root: Path
    rel: str
    lora_rel: str

    @property
    def report_dir(self) -> Path:
        return self.root / self.rel if self.rel else self.root

    @property
    def lora_dir(self) -> Path:
        return self.root / self.lora_rel


def default_report_dir(src: Path) -> Path:
    """Where --in-place puts its report: SRC's sibling `<name>_porter_report`."""
    src = src.resolve()
    return src.parent / f"{src.name}_porter_report"


def patch_bytes(run: RunResult) -> bytes:
    """The unified diff of every changed file, in path order (each made by its worker)."""
    return b"".join(r.diff for r in run.results if r.new_bytes is not None)


def report_place(src: Path, out: Path, opts: ConvertOptions) -> ReportPlace:
    """Where this run's report goes, or DestinationError saying why it cannot go there."""
    chosen = opts.report_dir if opts.report_dir is not None else (default_report_dir(src) if opts.in_place else None)
    if chosen is None:
        for name in (REPORT_DIR, LORA_DIR):
            _not_users(src / name, name)
            _no_link_or_file(out / name)
        return ReportPlace(out, REPORT_DIR, LORA_DIR)
    from porter.core.files import refuse_linked_folder

    # `<SRC>_porter_report` planted as a link: never written through.
    refuse_linked_folder(chosen, "remove it, or pass --report-dir with another folder")
    src_r, chosen_r = src.resolve(), chosen.resolve()
    if chosen_r == src_r or src_r in chosen_r.parents:
        raise DestinationError(f"report folder {chosen} is inside the source tree {src}; choose one outside it")
    if not opts.in_place:
        out_r = out.resolve()
        if chosen_r == out_r:
            raise DestinationError(f"report folder {chosen} is the output tree; choose a folder inside or beside it")
        if out_r in chosen_r.parents:
            rel = chosen_r.relative_to(out_r).as_posix()
            if os.path.lexists(src / rel.split("/")[0]):
                raise DestinationError(
                    f"report folder {chosen} would mix the report with {src / rel.split('/')[0]} "
                    f"of the source tree; choose another folder"
                )
    if os.path.lexists(chosen) and not os.path.isdir(chosen):
        raise DestinationError(f"report folder {chosen} exists and is not a folder")
    for name in sorted(REPORT_FILES):
        path = chosen / name
        if os.path.lexists(path) and not (path.is_file() and not path.is_symlink() and _porters_file(path)):
            raise DestinationError(
                f"{path} exists and is not a report porter wrote; porter does not write over it "
                f"(choose another --report-dir)"
            )
    _no_link_or_file(chosen / LORA_DIR)
    _not_users(chosen / LORA_DIR, LORA_DIR)
    return ReportPlace(chosen, "", LORA_DIR)


_MARKS = {
    "report.json": lambda head: b'"schema_version"' in head and b'"porter_version"' in head,
    "report.md": lambda head: head.startswith(b"# porter report"),
    "report.html": lambda head: b"<title>porter report" in head,
    "changes.patch": lambda head: head == b"" or head.startswith((b"diff --git ", b"\\ ")),
    "requirements-mlu.txt": lambda head: head.startswith(b"# porter: constraints"),
    "requirements-hip.txt": lambda head: head.startswith(b"# porter: constraints"),
}


def _porters_file(path: Path) -> bool:
    """Whether a report file in the report folder is one porter wrote (a run killed while
    writing its report leaves some of them without report.json: a re-run writes over them)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return _MARKS[path.name](head)


def _not_users(path: Path, name: str) -> None:
    """Refuse a porter_report / porter_lora at `path` that is the user's (not porter's output)."""
    if not os.path.lexists(path):
        return
    if path.is_symlink() or not path.is_dir() or not porters_own(str(path), name):
        what = "a symbolic link" if path.is_symlink() else ("a folder" if path.is_dir() else "a file")
        raise DestinationError(
            f"{path} is {what} porter did not write, where porter writes its {name}; porter does not write "
            f"over or through it: pass --report-dir DIR to write the report and LoRA files elsewhere"
        )


def _no_link_or_file(path: Path) -> None:
    if path.is_symlink():
        raise DestinationError(
            f"{path} is a symbolic link; porter never writes through a link (remove it, or pass --report-dir DIR)"
        )
    if os.path.lexists(path) and not path.is_dir():
        raise DestinationError(
            f"{path} exists and is not a folder; porter does not write over it (remove it, or pass --report-dir DIR)"
        )


@dataclass
class Converted:
    """What a convert run did: the run (each file's final status), the report, OUT, where
    the report went, and the files it could not write (path -> why)."""

    run: RunResult
    report: dict
    out: Path | None
    place: ReportPlace | None = None
    not_written: dict[str, str] | None = None
    removed_temporaries: tuple[str, ...] = ()
    # --force into porter's earlier OUT: the files of the earlier run this one did not write
    # (removed), and the files of OUT neither run wrote (kept: the user's).
    removed_stale: tuple[str, ...] = ()
    unknown_in_out: tuple[str, ...] = ()
    # porter_lora files that differ from what porter writes (edited by hand): kept, not rewritten.
    kept_lora_edits: tuple[Path, ...] = ()

    def __iter__(self):  # `run, report, out = convert(...)`, as before
        return iter((self.run, self.report, self.out))


def convert(src: Path, opts: ConvertOptions) -> Converted:
    """Convert `src`. Raises DestinationError (OUT or the report folder cannot be used) and
    OSError (naming the path) when porter's own output cannot be written."""
    out: Path | None
    place: ReportPlace | None = None
    if opts.diff_only:
        out = None
    elif opts.in_place:
        out = src
        place = report_place(src, out, opts)
    else:
        out = opts.out or default_out(src, opts.target)
        check_destination(src, out, opts.force)
        place = report_place(src, out, opts)
    # What porter's earlier run wrote into OUT, read before this run writes its report there.
    earlier = earlier_outputs(out) if opts.force and out is not None and not opts.in_place else set()
    if place is not None and (opts.in_place or opts.report_dir is not None):
        # The report folder is made now: one that cannot be made (a read-only parent) stops
        # the run before SRC is rewritten, not after.
        from porter.core.files import open_dir_beneath

        os.close(open_dir_beneath(place.root, place.rel))
    removed: list[str] = []
    journal = None
    if opts.in_place:
        from porter.engine.output import InPlaceJournal

        # Only temporaries a killed run's record proves porter's are removed (never a
        # user's file that merely looks like one).
        journal = InPlaceJournal(place.root, place.rel, src)
        removed = journal.remove_stale()
    exclude = out.resolve() if out is not None and not opts.in_place else None
    # OUT is written while the files are converted: every file as it is in SRC, by a forked
    # process; the converted ones are written over their copies afterwards.
    writer = TreeWriter(src, out, background=opts.jobs != 1) if out is not None and not opts.in_place else None
    if writer is not None:
        writer.start_copy(exclude)
    from porter.engine.cache import ResultCache
    from porter.lora.render import edited_lora_files, render_lora
    from porter.engine.parallel import side_by_side
    from porter.reports.json_report import build_report
    from porter.reports.write import report_steps
    from porter.engine.runner import convert_tree
    from porter.core.model import FileResult
    from porter.rules import ActiveRules, Selection, load_rules

    rules = load_rules(opts.target, opts.rule_files)
    active = ActiveRules(rules, Selection(opts.version, opts.select, opts.ignore, extend=opts.extend))
    cache = ResultCache(opts.cache_dir) if opts.cache_dir else None
    run = convert_tree(src, active, opts.jobs, exclude, cache, opts.files, opts.max_bytes)
    # A project codemod that could not be loaded did not run: listed as failed (exit 1) with why.
    problems = [
        FileResult(path, "failed", kind="codemod", reason=f"codemod not run: {why}") for path, why in rules.problems
    ]
    if out is None:
        run.results += problems
        return Converted(run, build_report(run, rules, out), None)
    if writer is not None:
        writer.write(run.results)
        writer.links(run.symlinks)
        writer.keep_dir_modes([r.path for r in run.results])
        failures = writer.failures
        stale, unknown = writer.settle(earlier, set(run.symlinks) - set(failures), _porters_folders(out, place))
    else:
        failures = _rewrite_src(run, journal)
        stale, unknown = [], []
    # A file SRC would not let porter read cannot be copied either: it is failed already,
    # with the reason that matters (it was never porter's to write).
    unread = {r.path for r in run.results if r.status == "failed" and (r.reason or "").startswith("cannot read")}
    failures = {path: why for path, why in failures.items() if path not in unread}
    if failures:
        _mark_not_written(run, failures)
    run.results += problems
    report = build_report(run, rules, out)
    constraints = _constraints_step(src, opts, report, place)
    # The report pages and the LoRA entry point share nothing: each is written by the next free
    # process, the two long ones (report.html, then the LoRA files) first, report.md after them;
    # report.json, which says the report is there, comes last.
    report_pages, finish_report = report_steps(report, patch_bytes(run), place.root, place.rel, opts.cache_dir)
    # A train_lora.py the user edited after an earlier run (in <SRC>_porter_report with
    # --in-place, or in OUT with --force) is theirs: kept, and named; `porter lora --force` replaces it.
    kept = tuple(
        edited_lora_files(out, place.lora_dir, opts.target, cache_dir=opts.cache_dir)
        if os.path.lexists(place.lora_dir)
        else ()
    )  # a first run has nothing there to keep
    lora = partial(render_lora, out, place.lora_dir, opts.target, cache_dir=opts.cache_dir, root=place.root, skip=kept)
    side_by_side([*report_pages[:1], lora, constraints, *report_pages[1:]], opts.jobs)
    finish_report()
    from porter.core.files import remove_stale_temporaries_in

    # What a killed run's writer left there: temporaries of the files porter writes there only.
    for folder, written in ((place.report_dir, REPORT_FILES), (place.lora_dir, LORA_FILES)):
        if not folder.is_symlink():
            remove_stale_temporaries_in(folder, written)
    return Converted(run, report, out, place, failures, tuple(removed), tuple(stale), tuple(unknown), kept)


def _porters_folders(out: Path, place: ReportPlace) -> set[str]:
    """The top-level names of OUT that this run's report and LoRA folders are (or are in)."""
    names = set()
    for folder in (place.report_dir, place.lora_dir):
        try:
            names.add(folder.resolve().relative_to(out.resolve()).parts[0])
        except (ValueError, IndexError):
            pass
    return names


def _constraints_step(src: Path, opts: ConvertOptions, report: dict, place: ReportPlace) -> Callable[[], None]:
    """Add the constraints file's derivation to `report` and return the step that writes it
    (porter_report/requirements-<target>.txt, from SRC's own pins and the package table)."""
    from porter.core.files import write_beneath
    from porter.filetypes.constraints import DERIVATION, constraints_file_name, derive_constraints, render_constraints

    name = constraints_file_name(opts.target)
    rows = derive_constraints(src, opts.target, opts.version)
    report["constraints"] = {
        "file": name,
        "derived": DERIVATION,
        "rows": [c.plain() for c in rows],
    }
    text = render_constraints(rows, opts.target, opts.version)
    rel = f"{place.rel}/{name}" if place.rel else name
    return partial(write_beneath, place.root, rel, text.encode("utf-8"))


def _rewrite_src(run: RunResult, journal) -> dict[str, str]:
    """Write the changed files into SRC (--in-place), recorded in the journal meanwhile (a
    run killed while writing leaves temporaries the next run can prove porter's)."""
    from porter.engine.output import write_in_place

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
    from porter.core.model import FileResult

    seen = set()
    results = []
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


# `porter.convert(src, target=...)` is the API (porter/api.py); this module stays importable
# as the feature it is. See porter/__init__.py.
from porter import FeatureModule as _FeatureModule  # noqa: E402

sys.modules[__name__].__class__ = _FeatureModule
