"""`porter check` and `porter ops`: thin click commands over porter.check and the op tables.

Exit codes (as ruff's): 0 clean, 1 findings at or above --fail-on, 2 usage or
internal error; --exit-zero turns 1 into 0, never 2.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from porter.commands.options import (
    HELP,
    cache_options,
    chosen_cache_dir,
    codes,
    config_options,
    exclude_options,
    ignore_option,
    jobs_option,
    max_file_size_option,
    settings_text,
    usage_errors,
    version_option,
)
from porter.core.progress import QUIET_START, Progress, watching
from porter.core.terminal import printable
from porter.rules import TARGETS, RuleError
from porter.rules.terms import TARGET_HELP

if TYPE_CHECKING:
    from porter.checker.report import CheckReport, Format


@click.command("check", context_settings=HELP)
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--target",
    "-t",
    type=click.Choice(TARGETS),
    default=None,
    help=f"{TARGET_HELP}; default: `target` of the configuration.",
)
@version_option
@click.option(
    "--format", "fmt", type=click.Choice(("text", "json", "sarif", "github")), default="text", show_default=True
)
@click.option(
    "--fail-on",
    type=click.Choice(("error", "warning")),
    default=None,
    help="Lowest severity that makes the check fail (exit 1; default: error).",
)
@click.option(
    "--exit-zero",
    is_flag=True,
    help="Exit 0 even when findings fail the check (usage and internal errors still exit 2).",
)
@click.option(
    "--select",
    default=None,
    help="Only rules whose code starts with one of these (comma-separated; replaces the configured select). On hip, PRT903 (unknown APIs) runs only when named here.",
)
@click.option(
    "--extend-select",
    default=None,
    help="Rules to add to the selection (comma-separated), e.g. PRT003 (unused suppressions).",
)
@ignore_option
@exclude_options
@click.option(
    "--respect-gitignore/--no-respect-gitignore",
    default=None,
    help="Leave out what .gitignore files ignore (default: yes).",
)
@click.option(
    "--force-exclude",
    is_flag=True,
    help="Apply the exclusions to files named on the command line too (for pre-commit).",
)
@click.option(
    "--baseline",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Accept the findings recorded in this file; only new ones are shown and fail.",
)
@click.option(
    "--write-baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Record every current finding in this file and exit 0.",
)
@click.option("--quiet", "-q", is_flag=True, help="Print the findings only: no summary, no notes on stderr.")
@click.option("--verbose", "-v", is_flag=True, help="Also say which settings and files were used, on stderr.")
@max_file_size_option
@config_options
@jobs_option
@cache_options
def check(
    paths: tuple[Path, ...],
    target: str | None,
    version: str | None,
    fmt: Format,
    fail_on: str | None,
    exit_zero: bool,
    select: str | None,
    extend_select: str | None,
    ignore: str | None,
    exclude: tuple[str, ...],
    extend_exclude: tuple[str, ...],
    respect_gitignore: bool | None,
    force_exclude: bool,
    baseline: Path | None,
    write_baseline: Path | None,
    quiet: bool,
    verbose: bool,
    config: Path | None,
    isolated: bool,
    show_settings: bool,
    max_mb: float,
    jobs: int | None,
    cache_dir: Path | None,
    no_cache: bool,
) -> None:
    """Report what porter would change in PATHS (a tree, or files as pre-commit passes them;
    default: .) and the torch APIs TARGET cannot run. Writes nothing.

    Settings come from [tool.porter] in pyproject.toml or porter.toml, found by walking up
    from the first path; options override them (`porter config` shows the result).
    """
    from porter import api
    from porter.checker.baseline import BaselineError

    if no_cache:  # nothing in the user cache either (parsed rule files, compiled templates)
        from porter.core.datafiles import disable_user_cache

        disable_user_cache()
    paths = paths or (Path("."),)
    try:
        settings = api.settings_for(
            paths[0],
            config or not isolated,
            target=target,
            target_version=version,
            select=codes(select, validate=False),
            extend_select=codes(extend_select, validate=False),
            ignore=codes(ignore, validate=False),
            exclude=exclude or None,
            extend_exclude=extend_exclude,
            respect_gitignore=respect_gitignore,
            baseline=baseline,
            fail_on=fail_on,
        )
    except api.ConfigError as exc:  # one line naming the file (or option) and the key
        click.echo(printable(f"porter: error: {exc}"), err=True)
        sys.exit(2)
    if show_settings:
        click.echo(settings_text(settings, paths[0]), nl=False)
        return
    if write_baseline is not None:  # every finding is recorded: none is accepted by the old baseline
        settings = replace(settings, baseline=None)
    with usage_errors():
        options = api.options_for(
            settings,
            jobs=jobs,
            cache_dir=chosen_cache_dir(cache_dir, no_cache),
            force_exclude=force_exclude,
            max_file_size=max_mb,
        )
    if quiet and verbose:
        raise click.UsageError("--quiet and --verbose cannot be combined")
    verbosity = -1 if quiet else 1 if verbose else 0
    if verbose:
        click.echo(
            printable(
                f"porter: settings: {settings.config.label if settings.config else 'no configuration file'}; "
                f"target {options.target} {options.version or ''}".rstrip()
            ),
            err=True,
        )
    output = None
    try:
        with watching(Progress(label="porter check", delay=QUIET_START)):  # on a terminal's stderr only
            report = api.check(paths, options=options)
        code = _notes(report, write_baseline, verbosity)
        if write_baseline is None:
            output = _rendered(report, fmt, verbosity)
    except (RuleError, BaselineError, OSError, api.ConfigError) as exc:
        click.echo(printable(f"porter: error: {exc}"), err=True)
        code = 2
    except Exception as exc:  # a porter bug: say so, and never let --exit-zero hide it
        click.echo(printable(f"porter: internal error: {type(exc).__name__}: {exc}"), err=True)
        code = 2
    if output is not None:  # printed outside the handler: a stdout that cannot take it is said by cli.run
        text, color = output
        click.echo(text, nl=False, color=color)  # click would strip colours off a pipe
    sys.exit(0 if code == 1 and exit_zero else code)


@click.command("config", context_settings=HELP)
@click.argument("path", required=False, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--config",
    "config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Read this configuration file instead of looking for one.",
)
def config_cmd(path: Path | None, config: Path | None) -> None:
    """Print the settings porter resolves for PATH (default: .) and where each came from."""
    from porter.config import settings_for
    from porter.config import ConfigError

    start = path or Path(".")
    try:
        settings = settings_for(start, config or True)
    except ConfigError as exc:  # one line naming the file (or option) and the key
        click.echo(printable(f"porter: error: {exc}"), err=True)
        sys.exit(2)
    click.echo(settings_text(settings, start), nl=False)


def _notes(report: CheckReport, write_baseline: Path | None, verbosity: int) -> int:
    """Say a check's notes on stderr (and write the baseline); the exit code before --exit-zero."""
    from porter.checker.baseline import write_baseline as write

    for file in report.files:
        if file.skipped and verbosity >= 0:
            click.echo(printable(f"porter: skipped {file.path}: {file.skipped}"), err=True)
        if file.error:  # a porter bug: said even with --quiet
            click.echo(printable(f"porter: failed {file.path}: {file.error}"), err=True)
    if verbosity > 0:
        handled = [f for f in report.files if f.kind != "other"]
        click.echo(
            printable(
                f"porter: {len(report.files)} file(s) scanned in {report.root}, {len(handled)} of a type porter reads"
            ),
            err=True,
        )
        for file in handled:
            click.echo(printable(f"porter:   {file.kind:<12} {file.path}"), err=True)
    if write_baseline is not None:
        count = write(write_baseline, report.target, report.target_version, report.checked)
        click.echo(printable(f"porter: wrote {count} finding(s) to the baseline {write_baseline}"), err=True)
        return 0
    return report.exit_code


def _rendered(report: CheckReport, fmt: Format, verbosity: int) -> tuple[str, bool]:
    """The findings in `fmt`, and whether they are coloured."""
    from porter.checker.shown import use_color

    color = fmt == "text" and use_color(getattr(sys.stdout, "isatty", lambda: False)())
    return report.render(fmt, color, verbosity >= 0), color


@click.command("ops", context_settings=HELP)
@click.argument("name")
@click.option(
    "--target",
    "-t",
    type=click.Choice(TARGETS),
    default=None,
    help=f"{TARGET_HELP}; default: `target` of the configuration.",
)
@click.option(
    "--target-version",
    "version",
    default=None,
    help="torch version of the table (mlu: 2.1, 2.4); default: the configuration's, else the newest.",
)
def ops(name: str, target: str | None, version: str | None) -> None:
    """What the support table of TARGET says about the torch API NAME (F.x, nn.X and Tensor.x work too)."""
    from porter.tables.optables import ANY_VERSION, available_versions, load_api_table
    from porter.python.opscan import table_label

    if target is None:  # the configuration found from the working directory, as check finds it
        from porter.config import ConfigError, required_target, settings_for

        try:
            settings = settings_for(Path("."), True)
        except ConfigError as exc:
            click.echo(printable(f"porter: error: {exc}"), err=True)
            sys.exit(2)
        with usage_errors():
            target = required_target(settings)
        # The configured line goes with the configured target only, never with another --target.
        version = version or settings.target_version
    api = _qualify(name)
    try:
        table = load_api_table(target, version)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--target-version") from exc
    entry = table.lookup(api)
    click.echo(f"{api}: {entry.status} in {table_label(table)}")
    if entry.matched and entry.matched != api:
        click.echo(f"  matched by: {entry.matched}")
    if entry.note:
        click.echo(f"  note: {entry.note}")
    if entry.counterpart:
        click.echo(f"  counterpart: {entry.counterpart}")
    click.echo(f"  source: {entry.source or table.source}")
    others = [v for v in available_versions(target) if v not in (table.version, ANY_VERSION)]
    for other in others:
        e = load_api_table(target, other).lookup(api)
        click.echo(f"  torch {other}: {e.status}" + (f" ({e.note})" if e.note and e.note != entry.note else ""))


_ALIASES = {"F": "torch.nn.functional", "nn": "torch.nn", "Tensor": "torch.Tensor", "th": "torch"}


def _qualify(name: str) -> str:
    """`F.pad` -> `torch.nn.functional.pad`, as the usual import aliases mean."""
    head, dot, rest = name.partition(".")
    return f"{_ALIASES[head]}.{rest}" if dot and head in _ALIASES else name
