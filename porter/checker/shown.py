"""What every output format of `porter check` is given: the findings left to show."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from porter.checker.model import Checked, api_counts
from porter.core.model import FileCheck

if TYPE_CHECKING:
    from porter.rules import RuleSet  # for the annotations only: importing it loads the rule model


@dataclass(frozen=True)
class Shown:
    """What a check shows, and how: the findings left after suppressions and the baseline,
    with what the summaries count. The output formats read this, not the CheckReport: the
    report's `render` calls them, so they sit below it."""

    target: str
    version: str | None
    src: Path  # the checked tree; findings' paths are relative to it
    files: tuple[FileCheck, ...]  # every file scanned
    rules: RuleSet
    findings: tuple[Checked, ...]
    accepted: int = 0  # by the baseline
    display_root: str = "."  # SRC as the user can open it from the working directory
    color: bool = False  # ANSI colours in the text format (see `use_color`)
    summary: bool = True  # False with --quiet: the findings only

    @property
    def suppressed(self) -> int:
        return sum(f.suppressed for f in self.files)

    def api_counts(self) -> dict[str, int]:
        """How many distinct torch APIs the tree uses, per status in the target's table."""
        return api_counts(self.files)

    def display_path(self, rel: str) -> str:
        return display_path(self.display_root, rel)

    def by_rule(self) -> list[tuple[str, int]]:
        return sorted(Counter(c.finding.rule for c in self.findings).items())


def display_path(root: str, rel: str) -> str:
    """A finding's path (relative to the tree) as the user opens it from the working directory."""
    return os.path.normpath(os.path.join(root, rel)).replace(os.sep, "/")


def use_color(stream_isatty: bool, environ: dict | None = None) -> bool:
    """Colour as the conventions say: NO_COLOR (any value) turns it off, FORCE_COLOR (any
    value but "0") on; otherwise only on a terminal. (no-color.org, force-color.org)"""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR") not in (None, "", "0"):
        return True
    return stream_isatty and env.get("TERM") != "dumb"


def display_root(src: Path) -> str:
    """SRC relative to the working directory when it lies below it, else as given."""
    if not src.is_absolute():
        return os.path.normpath(src)
    try:
        return os.path.relpath(src, Path.cwd()) if src.resolve().is_relative_to(Path.cwd().resolve()) else str(src)
    except ValueError:  # another drive on Windows
        return str(src)
