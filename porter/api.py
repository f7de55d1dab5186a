"""porter's Python API: `porter.check(...)` and `porter.convert(...)`, typed results.

    import porter

    result = porter.check("path/to/repo", target="mlu")
    for f in result.findings:                       # porter.Finding: rule, severity, path, line, ...
        print(f.severity, f.rule, f.path, f.line, f.message)
    result.exit_code                                # 0 clean, 1 failing findings, 2 a file failed

    done = porter.convert("path/to/repo", target="mlu", out="path/to/repo_mlu")
    done.edits, done.changed_files, done.report     # report: report.json's data

Both read `[tool.porter]` / porter.toml as the commands do (`config=False` to ignore it, or a
path to read that file); keyword arguments override it, as options do. A bad setting raises
`porter.ConfigError`, a bad rule file `porter.RuleError`, a bad baseline `ValueError`. The
`porter check` command is this function plus printing; `import porter` itself loads none of it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from porter.config import ConfigError, Settings, file_selection, settings_for
from porter.core.model import Finding
from porter.rules import RuleError

if TYPE_CHECKING:
    from porter.check.model import CheckResult, Checked
    from porter.core.model import FileCheck, FileResult

__all__ = ["CheckReport", "ConfigError", "ConvertReport", "Finding", "RuleError", "check", "convert"]

PathLike = str | os.PathLike
_RANK = {"info": 0, "warning": 1, "error": 2}


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
    result: CheckResult = field(repr=False)  # every finding, with fingerprints (for renderers)
    checked: tuple[Checked, ...] = field(repr=False, default=())  # `findings` with fingerprints

    @property
    def by_severity(self) -> dict[str, int]:
        out = {"error": 0, "warning": 0, "info": 0}
        for f in self.findings:
            out[f.severity] += 1
        return out

    def render(
        self, fmt: Literal["text", "json", "sarif", "github"] = "text", color: bool = False, summary: bool = True
    ) -> str:
        """The findings as `porter check --format FMT` prints them (`summary=False`: --quiet)."""
        from porter.check.formats import RENDERERS
        from porter.check.shown import Shown, display_root
        from porter.rules import load_rules

        shown = Shown(
            self.result,
            load_rules(self.target, self.settings.project_rules),
            self.checked,
            self.accepted,
            display_root(self.root),
            color,
            summary,
        )
        return RENDERERS[fmt](shown)


@dataclass(frozen=True)
class ConvertReport:
    """What `porter.convert` did: per file its result, the findings left for a person, the
    report (report.json's data) and the patch; `out` is None for `diff=True`."""

    target: str
    target_version: str | None
    src: Path
    out: Path | None
    files: tuple[FileResult, ...]
    findings: tuple[Finding, ...]
    report: dict = field(repr=False)
    patch: bytes = field(repr=False, default=b"")

    @property
    def edits(self) -> int:
        return self.report["summary"]["edits"]

    @property
    def changed_files(self) -> tuple[str, ...]:
        return tuple(r.path for r in self.files if r.status == "changed")

    @property
    def failed_files(self) -> tuple[str, ...]:
        return tuple(r.path for r in self.files if r.status == "failed")


def _paths(paths: PathLike | Sequence[PathLike]) -> list[Path]:
    if isinstance(paths, (str, os.PathLike)):
        return [Path(paths)]
    return [Path(p) for p in paths] or [Path(".")]


def check(
    paths: PathLike | Sequence[PathLike] = ".",
    target: str | None = None,
    *,
    target_version: str | None = None,
    select: str | Iterable[str] | None = None,
    extend_select: str | Iterable[str] | None = None,
    ignore: str | Iterable[str] | None = None,
    exclude: str | Iterable[str] | None = None,
    extend_exclude: str | Iterable[str] | None = None,
    respect_gitignore: bool | None = None,
    force_exclude: bool = False,
    baseline: PathLike | None = None,
    fail_on: Literal["error", "warning"] | None = None,
    config: bool | PathLike = True,
    jobs: int | None = None,
    cache_dir: PathLike | None = None,
    settings: Settings | None = None,
) -> CheckReport:
    """Check a tree (or files) for `target` ("mlu" or "hip"), as `porter check` does; writes
    nothing but the cache. Arguments left None come from the configuration.

    paths: a tree, or files as pre-commit passes them (default: the working directory).
    target, target_version: "mlu" or "hip", and the torch_mlu line ("2.1", "2.4"; default:
        the newest).
    select, extend_select, ignore: rule codes or prefixes ("PRT9", or a comma-separated str).
    exclude, extend_exclude, respect_gitignore, force_exclude: which files are scanned, as
        the options of the same names.
    baseline: accept the findings recorded in this file. fail_on: "error" or "warning".
    config: True to read [tool.porter] / porter.toml found from the first path, False for
        none, or the path of the file to read. settings: resolved settings (config ignored).
    jobs: worker processes (None or 0: all cores). cache_dir: the per-file cache (None: none).

    Returns a CheckReport; raises ConfigError, RuleError, or ValueError for a bad baseline.
    """
    from porter.check.baseline import load_baseline, split_accepted
    from porter.check.run import check_tree
    from porter.rules import Selection
    from porter.tables.versions import ANY_VERSION, available_versions

    chosen = _paths(paths)
    if settings is None:
        settings = settings_for(
            chosen[0],
            config,
            target=target,
            target_version=target_version,
            select=select,
            extend_select=extend_select,
            ignore=ignore,
            exclude=exclude,
            extend_exclude=extend_exclude,
            respect_gitignore=respect_gitignore,
            baseline=baseline,
            fail_on=fail_on,
        )
    if settings.target is None:
        raise ConfigError(
            "no target: pass target='mlu' or 'hip', or set `target` in [tool.porter] (pyproject.toml) or porter.toml"
        )
    version = settings.target_version
    if version is None:
        known = [v for v in available_versions(settings.target) if v != ANY_VERSION]
        version = known[-1] if known else None
    root, files = file_selection(chosen, settings, force_exclude)
    selection = Selection(version, settings.select, settings.ignore, extend=settings.extend_select)
    result = check_tree(
        root,
        settings.target,
        selection,
        jobs,
        Path(cache_dir) if cache_dir else None,
        files=files,
        project_rules=settings.project_rules,
    )
    shown, accepted = result.findings, 0
    if settings.baseline is not None:
        shown, accepted = split_accepted(shown, load_baseline(settings.baseline, result.target))
    fail = _RANK[settings.fail_on]
    if any(f.error for f in result.files):
        code = 2
    else:
        code = 1 if any(_RANK[c.finding.severity] >= fail for c in shown) else 0
    return CheckReport(
        settings.target,
        version,
        root,
        settings,
        tuple(c.finding for c in shown),
        result.files,
        sum(f.suppressed for f in result.files),
        accepted,
        code,
        result,
        tuple(shown),
    )


def convert(
    src: PathLike,
    target: str | None = None,
    *,
    out: PathLike | None = None,
    in_place: bool = False,
    diff: bool = False,
    force: bool = False,
    target_version: str | None = None,
    select: str | Iterable[str] | None = None,
    extend_select: str | Iterable[str] | None = None,
    ignore: str | Iterable[str] | None = None,
    exclude: str | Iterable[str] | None = None,
    extend_exclude: str | Iterable[str] | None = None,
    respect_gitignore: bool | None = None,
    config: bool | PathLike = True,
    jobs: int | None = None,
    cache_dir: PathLike | None = None,
) -> ConvertReport:
    """Convert the CUDA tree `src` for `target`, as `porter convert` does: OUT (default
    `<src>_<target>` beside it) gets the ported tree, porter_report/ and porter_lora/.
    Arguments left None come from the configuration.

    out: the output tree. in_place: rewrite SRC (the report goes beside it). diff: write
        nothing and return the patch. force: write into a non-empty OUT.
    target, target_version, select, extend_select, ignore, exclude, extend_exclude,
        respect_gitignore, config, jobs, cache_dir: as for `porter.check`.

    Returns a ConvertReport; raises ConfigError, RuleError, ValueError (a DestinationError)
    for an unusable OUT, and OSError naming the path that could not be written.
    """
    from porter.convert import ConvertOptions, convert as run_convert, patch_bytes
    from porter.tables.versions import ANY_VERSION, available_versions

    src = Path(src)
    if not src.is_dir():
        raise FileNotFoundError(f"{src}: not a folder")
    settings = settings_for(
        src,
        config,
        target=target,
        target_version=target_version,
        select=select,
        extend_select=extend_select,
        ignore=ignore,
        exclude=exclude,
        extend_exclude=extend_exclude,
        respect_gitignore=respect_gitignore,
    )
    if settings.target is None:
        raise ConfigError(
            "no target: pass target='mlu' or 'hip', or set `target` in [tool.porter] (pyproject.toml) or porter.toml"
        )
    if in_place and (out is not None or diff):
        raise ValueError("in_place cannot be combined with out or diff")
    version = settings.target_version
    if version is None:
        known = [v for v in available_versions(settings.target) if v != ANY_VERSION]
        version = known[-1] if known else None
    _, files = file_selection([src], settings)
    opts = ConvertOptions(
        settings.target,
        version,
        Path(out) if out is not None else None,
        in_place,
        diff,
        force,
        jobs,
        settings.select,
        settings.ignore,
        Path(cache_dir) if cache_dir else None,
        extend=settings.extend_select,
        files=files,
        rule_files=settings.project_rules,
    )
    run, report, out_dir = run_convert(src, opts)
    findings = tuple(f for r in run.results for f in r.findings)
    return ConvertReport(settings.target, version, src, out_dir, tuple(run.results), findings, report, patch_bytes(run))
