"""What `porter.check` returns: the findings a check left to show, and how it exits."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from porter.checker.model import Checked
from porter.checker.shown import Shown, display_root
from porter.config import Settings
from porter.core.model import FileCheck, Finding

if TYPE_CHECKING:
    from porter.rules import RuleSet  # for the annotations only: importing it loads the rule model

Format = Literal["text", "json", "sarif", "github"]  # `porter check --format`


@dataclass(frozen=True)
class CheckReport:
    """What `porter.check` found. `findings` are those left after suppression comments and the
    baseline, in path and line order; `files` holds every file scanned."""

    target: str
    target_version: str | None
    root: Path  # paths of findings are relative to it
    settings: Settings
    findings: tuple[Finding, ...]
    files: tuple[FileCheck, ...]
    suppressed: int  # by `# porter: ignore[...]` comments
    accepted: int  # by the baseline
    exit_code: int  # as `porter check` exits: 0 clean, 1 findings at or above fail-on, 2 a file failed
    rules: RuleSet = field(repr=False)  # the rules that ran (what the formats say of each code)
    checked: tuple[Checked, ...] = field(repr=False)  # `findings` with their fingerprints

    @property
    def by_severity(self) -> dict[str, int]:
        out = {"error": 0, "warning": 0, "info": 0}
        for f in self.findings:
            out[f.severity] += 1
        return out

    def render(self, fmt: Format = "text", color: bool = False, summary: bool = True) -> str:
        """The findings as `porter check --format FMT` prints them (`summary=False`: --quiet)."""
        from porter.checker.formats import RENDERERS  # the formats' code only when asked for

        shown = Shown(
            self.target,
            self.target_version,
            self.root,
            self.files,
            self.rules,
            self.checked,
            self.accepted,
            display_root(self.root),
            color,
            summary,
        )
        return RENDERERS[fmt](shown)
