"""What one `convert` or `check` run is asked to do, resolved once: the project's settings
([tool.porter] / porter.toml, with the options over them), the target and its torch line,
and how the run goes. The command line and the Python API build it the same way
(`options_for`), and both features read nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from porter.config import Settings, file_selection, required_target, target_version
from porter.core.limits import MAX_FILE_MB

if TYPE_CHECKING:
    from porter.core.fileset import FileSelection
    from porter.rules import Selection


@dataclass(frozen=True)
class RunOptions:
    """A run's options. `settings` hold what the configuration and the options chose (codes,
    excludes, per-file ignores, the project's rules, baseline, fail-on); the fields below
    them are how this run goes. Built by `options_for`; `RunOptions("mlu")` is a run with
    porter's defaults and no torch line (every rule of every line)."""

    target: str
    version: str | None = None  # the torch_mlu line (None: every line's rules)
    settings: Settings = field(default_factory=Settings)
    jobs: int | None = None  # worker processes (None or 0: all cores)
    cache_dir: Path | None = None  # the per-file result cache (None: none)
    force_exclude: bool = False  # check: the excludes apply to files named one by one too
    # convert: where it writes
    out: Path | None = None  # None: <SRC>_<target> beside SRC
    in_place: bool = False
    diff: bool = False  # write nothing: the patch only
    force: bool = False  # write into a non-empty OUT
    report_dir: Path | None = None  # None: OUT/porter_report (in place: <SRC>_porter_report)
    max_bytes: int | None = MAX_FILE_MB * 1024 * 1024  # larger files are copied, not converted

    @property
    def selection(self) -> Selection:
        """The rules the run chose: the torch line and the codes selected and ignored."""
        from porter.rules import Selection  # with the rule kinds: after convert has started copying SRC

        s = self.settings
        return Selection(self.version, s.select, s.ignore, extend=s.extend_select)

    @property
    def rule_files(self) -> tuple[Path, ...]:
        """The project's own rule and codemod files."""
        return self.settings.project_rules

    def files(self, paths: Sequence[Path]) -> tuple[Path, FileSelection]:
        """(tree, which files of it) for the paths the run was given (see config.file_selection)."""
        return file_selection(paths, self.settings, self.force_exclude)


def options_for(
    settings: Settings,
    *,
    jobs: int | None = None,
    cache_dir: Path | None = None,
    force_exclude: bool = False,
    out: Path | None = None,
    in_place: bool = False,
    diff: bool = False,
    force: bool = False,
    report_dir: Path | None = None,
    max_file_size: float = MAX_FILE_MB,
) -> RunOptions:
    """The options of a run with these settings: the target they name (config.NoTarget when
    none), its torch line (the newest unless chosen: config.UnknownVersion for one the
    target has no table for), and how the run goes. `max_file_size` in MB; 0: no limit."""
    target = required_target(settings)
    if in_place and (out is not None or diff):
        raise ValueError("in_place cannot be combined with out or diff")
    return RunOptions(
        target,
        target_version(target, settings.target_version),
        settings,
        jobs,
        cache_dir,
        force_exclude,
        out,
        in_place,
        diff,
        force,
        report_dir,
        int(max_file_size * 1024 * 1024) if max_file_size else None,
    )
