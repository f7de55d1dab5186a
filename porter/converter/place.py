"""Where `porter convert` puts its report and LoRA files, and what it refuses to write over.

`OUT/porter_report/` and `OUT/porter_lora/` by default; with `--report-dir DIR` the report
files in DIR and the LoRA files in `DIR/porter_lora/`; with `--in-place` (no --report-dir) in
SRC's sibling `<SRC>_porter_report/`, never in SRC. A `porter_report` or `porter_lora` in SRC
that porter did not write is the user's: porter refuses to write over it and names it
(`--report-dir` writes elsewhere). No report or LoRA file is ever written through a symbolic
link (core.files.write_beneath).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from porter.core.targets import TARGETS
from porter.core.tree import LORA_DIR, REPORT_DIR, REPORT_FILES, porters_own
from porter.engine.output import DestinationError


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


def report_place(src: Path, out: Path, report_dir: Path | None, in_place: bool) -> ReportPlace:
    """Where a run's report goes (`report_dir`: --report-dir), or DestinationError saying why
    it cannot go there."""
    chosen = report_dir if report_dir is not None else (default_report_dir(src) if in_place else None)
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
    if not in_place:
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
    **{f"requirements-{t}.txt": lambda head: head.startswith(b"# porter: constraints") for t in TARGETS},
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
