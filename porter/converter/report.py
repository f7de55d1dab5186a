"""What `porter.convert` returns: each file's result, the report, and what the run said."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from porter.core.model import FileResult, Finding


@dataclass(frozen=True)
class ConvertReport:
    """What `porter.convert` did: per file its result, the findings left for a person, the
    report (report.json's data) and the patch. `out`, `report_dir` and `lora_dir` are None
    for `diff=True`, which writes nothing."""

    target: str
    target_version: str | None
    src: Path
    out: Path | None
    files: tuple[FileResult, ...]
    findings: tuple[Finding, ...]
    report: dict[str, Any] = field(repr=False)
    patch: bytes = field(repr=False, default=b"")
    report_dir: Path | None = None  # where report.html, report.json, ... are
    lora_dir: Path | None = None  # where the LoRA entry point is
    not_written: dict[str, str] = field(default_factory=dict)  # files porter could not write: path -> why
    # Temporary files an interrupted --in-place run left in SRC, removed.
    removed_temporaries: tuple[str, ...] = ()
    # --force into porter's earlier OUT: the files of the earlier run this one did not write
    # (removed), and the files of OUT neither run wrote (kept: the user's).
    removed_stale: tuple[str, ...] = ()
    unknown_in_out: tuple[str, ...] = ()
    # porter_lora files that differ from what porter writes (edited by hand): kept, not rewritten.
    kept_lora_edits: tuple[Path, ...] = ()

    @property
    def edits(self) -> int:
        return self.report["summary"]["edits"]

    @property
    def changed_files(self) -> tuple[str, ...]:
        return tuple(r.path for r in self.files if r.status == "changed")

    @property
    def failed_files(self) -> tuple[str, ...]:
        return tuple(r.path for r in self.files if r.status == "failed")
