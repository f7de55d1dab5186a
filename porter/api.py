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
`porter.ConfigError`, a bad rule file `porter.RuleError`, a bad baseline `ValueError`.

The commands take this route too: `porter check` and `porter convert` resolve their options
into a `RunOptions` (`options_for`), pass it as `options=`, and print what comes back. The
run itself is porter/checker/run.py and porter/converter/run.py, over the engine.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from porter.checker.report import CheckReport
from porter.config import ConfigError, settings_for
from porter.converter.report import ConvertReport
from porter.core.model import Finding
from porter.rules import RuleError
from porter.core.limits import MAX_FILE_MB
from porter.run_options import RunOptions, options_for

__all__ = [
    "CheckReport",
    "ConfigError",
    "ConvertReport",
    "Finding",
    "RuleError",
    "RunOptions",
    "check",
    "convert",
    "options_for",
    "settings_for",
]

PathLike = str | os.PathLike


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
    max_file_size: float = MAX_FILE_MB,
    options: RunOptions | None = None,
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
        none, or the path of the file to read.
    jobs: worker processes (None or 0: all cores). cache_dir: the per-file cache (None: none).
    max_file_size: files larger than this many MB are skipped, reported as such (0: no limit).
    options: the run resolved already (`porter.options_for`); the arguments between `target`
        and `max_file_size` are then not read.

    Returns a CheckReport; raises ConfigError, RuleError, or ValueError for a bad baseline.
    """
    from porter.checker.run import run_check  # the engine, only when a check runs

    chosen = _paths(paths)
    if options is None:
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
        options = options_for(
            settings,
            jobs=jobs,
            cache_dir=Path(cache_dir) if cache_dir else None,
            force_exclude=force_exclude,
            max_file_size=max_file_size,
        )
    return run_check(chosen, options)


def convert(
    src: PathLike,
    target: str | None = None,
    *,
    out: PathLike | None = None,
    in_place: bool = False,
    diff: bool = False,
    force: bool = False,
    report_dir: PathLike | None = None,
    max_file_size: float = MAX_FILE_MB,
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
    options: RunOptions | None = None,
) -> ConvertReport:
    """Convert the CUDA tree `src` for `target`, as `porter convert` does: OUT (default
    `<src>_<target>` beside it) gets the ported tree, porter_report/ and porter_lora/.
    Arguments left None come from the configuration.

    out: the output tree. in_place: rewrite SRC (the report goes beside it). diff: write
        nothing and return the patch. force: write into a non-empty OUT.
    report_dir: the report files here, the LoRA files in its porter_lora/ (never inside SRC).
    max_file_size: files larger than this many MB are copied as they are (0: no limit).
    target, target_version, select, extend_select, ignore, exclude, extend_exclude,
        respect_gitignore, config, jobs, cache_dir, options: as for `porter.check`.

    Returns a ConvertReport; raises ConfigError, RuleError, ValueError (a DestinationError)
    for an unusable OUT, and OSError naming the path that could not be written.
    """
    from porter.converter.run import run_convert  # the engine, only when a conversion runs

    src = Path(src)
    if not src.is_dir():
        raise FileNotFoundError(f"{src}: not a folder")
    if options is None:
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
        options = options_for(
            settings,
            jobs=jobs,
            cache_dir=Path(cache_dir) if cache_dir else None,
            out=Path(out) if out is not None else None,
            in_place=in_place,
            diff=diff,
            force=force,
            report_dir=Path(report_dir) if report_dir is not None else None,
            max_file_size=max_file_size,
        )
    return run_convert(src, options)
