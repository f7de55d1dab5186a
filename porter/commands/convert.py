"""`porter convert`: a thin click command over porter.convert, and what it says of the run.

Exit codes: 0 done; 1 some files could not be converted; 2 usage error, or OUT, the report
or a file could not be written.
"""

from __future__ import annotations

import sys
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
from porter.core import progress
from porter.core.progress import Progress, watching
from porter.core.terminal import printable
from porter.rules import TARGETS, RuleError
from porter.rules.terms import TARGET_HELP

if TYPE_CHECKING:
    from porter.converter.report import ConvertReport


@click.command("convert", context_settings=HELP)
@click.argument("src", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--target",
    "-t",
    type=click.Choice(TARGETS),
    default=None,
    help=f"{TARGET_HELP}; default: `target` in [tool.porter].",
)
@version_option
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Output tree (default: <SRC>_<target> beside SRC).",
)
@click.option(
    "--in-place",
    is_flag=True,
    help="Rewrite SRC itself (atomic writes); the report goes to <SRC>_porter_report beside SRC.",
)
@click.option("--diff", "diff_only", is_flag=True, help="Print the unified patch and write nothing.")
@click.option("--force", is_flag=True, help="Write into a non-empty OUT.")
@click.option(
    "--report-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the report files here and the LoRA files to DIR/porter_lora (default: OUT/porter_report and "
    "OUT/porter_lora; with --in-place: <SRC>_porter_report beside SRC). Never inside SRC.",
)
@max_file_size_option
@jobs_option
@click.option("--select", default=None, help="Only rules whose code starts with one of these (comma-separated).")
@click.option("--extend-select", default=None, help="Also these codes (e.g. PRT9 or ALL for the informational ones).")
@ignore_option
@exclude_options
@click.option(
    "--quiet", "-q", is_flag=True, help="Print the counts and where the report is only: not the findings left."
)
@click.option(
    "--verbose", "-v", is_flag=True, help="Also list the info findings (notes), not only errors and warnings."
)
@cache_options
@config_options
def convert(
    src: Path,
    target: str | None,
    version: str | None,
    out: Path | None,
    in_place: bool,
    diff_only: bool,
    force: bool,
    report_dir: Path | None,
    max_mb: float,
    jobs: int | None,
    select: str | None,
    extend_select: str | None,
    ignore: str | None,
    exclude: tuple[str, ...],
    extend_exclude: tuple[str, ...],
    quiet: bool,
    verbose: bool,
    cache_dir: Path | None,
    no_cache: bool,
    config: Path | None,
    isolated: bool,
    show_settings: bool,
) -> None:
    """Convert the CUDA repository SRC for TARGET, and list the errors and warnings it leaves
    for a person (as `porter check` prints them) and where the report is.

    Exit codes: 0 done; 1 some files could not be converted; 2 usage error, or OUT, the
    report or a file could not be written (one line names the path and the cause)."""
    from porter import api
    from porter.core.files import describe
    from porter.engine.output import DestinationError

    if no_cache:  # nothing in the user cache either (parsed rule files, compiled templates)
        from porter.core.datafiles import disable_user_cache

        disable_user_cache()
    if in_place and (out or diff_only):
        raise click.UsageError("--in-place cannot be combined with --out or --diff")
    if diff_only and report_dir:
        raise click.UsageError("--diff writes nothing: it cannot be combined with --report-dir")
    if quiet and verbose:
        raise click.UsageError("--quiet and --verbose cannot be combined")
    # The configuration of SRC's project ([tool.porter] / porter.toml), options over it, as
    # `porter check` reads it: target, version, codes, excludes, per-file ignores, rules.
    chosen = {
        key: codes(value, option) or None
        for key, value, option in (
            ("select", select, "--select"),
            ("extend_select", extend_select, "--extend-select"),
            ("ignore", ignore, "--ignore"),
        )
    }
    try:
        settings = api.settings_for(
            src,
            config or not isolated,
            target=target,
            target_version=version,
            **chosen,
            exclude=exclude or None,
            extend_exclude=extend_exclude,
        )
    except api.ConfigError as exc:
        click.echo(printable(f"porter: error: {exc}"), err=True)
        sys.exit(2)
    if show_settings:
        click.echo(settings_text(settings, src), nl=False)
        return
    with usage_errors():
        options = api.options_for(
            settings,
            jobs=jobs,
            cache_dir=chosen_cache_dir(cache_dir, no_cache),
            out=out,
            in_place=in_place,
            diff=diff_only,
            force=force,
            report_dir=report_dir,
            max_file_size=max_mb,
        )
    try:
        with watching(Progress(label="porter convert", delay=progress.QUIET_START)):  # on a terminal's stderr only
            done = api.convert(src, options=options)
    except DestinationError as exc:
        raise click.UsageError(printable(str(exc))) from exc
    except RuleError as exc:
        click.echo(printable(f"porter: error in rules: {exc}"), err=True)
        sys.exit(2)
    except OSError as exc:
        # OUT, a report file or a LoRA file could not be written: the path and the cause,
        # and no report presented as complete.
        click.echo(printable(f"porter: error: {describe(exc)}"), err=True)
        sys.exit(2)
    except Exception as exc:  # a porter bug: say so in one line, never a traceback
        click.echo(printable(f"porter: internal error: {type(exc).__name__}: {exc}"), err=True)
        sys.exit(2)
    if diff_only:
        sys.stdout.buffer.write(done.patch)
        return
    sys.exit(_said(done, src, -1 if quiet else 1 if verbose else 0))


def _said(done: ConvertReport, src: Path, verbosity: int) -> int:
    """Say what a convert run did: the findings left for a person (errors and warnings; info
    too when verbose; none when quiet), the counts, and where OUT and report.html are. The
    exit code."""
    from porter.checker.shown import display_root, use_color
    from porter.checker.text import findings_text

    report = done.report
    if done.removed_temporaries:
        click.echo(
            printable(
                f"porter: removed {len(done.removed_temporaries)} temporary file(s) an interrupted run left in {src}"
            ),
            err=True,
        )
    if done.removed_stale:  # --force: OUT is what a fresh run makes, where porter can prove it
        click.echo(
            printable(
                f"porter: removed {len(done.removed_stale)} file(s) porter's earlier run wrote in "
                f"{done.out} that SRC no longer has"
            ),
            err=True,
        )
    if done.unknown_in_out:
        first = ", ".join(done.unknown_in_out[:3]) + (", ..." if len(done.unknown_in_out) > 3 else "")
        click.echo(
            printable(
                f"porter: warning: {len(done.unknown_in_out)} file(s) in {done.out} that porter did not "
                f"write are kept as they are: {first}"
            ),
            err=True,
        )
    if done.kept_lora_edits and done.lora_dir is not None:
        names = ", ".join(str(p) for p in done.kept_lora_edits)
        click.echo(
            printable(
                f"porter: warning: kept {names}: different from what porter writes there (edited?); "
                f"`porter lora {done.out} --target {done.report['target']} -o {done.lora_dir} "
                f"--force` replaces it"
            ),
            err=True,
        )
    if verbosity >= 0:
        shown = ("error", "warning", "info") if verbosity > 0 else ("error", "warning")
        left = [f for f in done.findings if f.severity in shown]
        color = use_color(getattr(sys.stdout, "isatty", lambda: False)())
        listed = findings_text(left, display_root(src), color)
        click.echo(listed + "\n" if listed else "", nl=False, color=color)  # a blank line before the counts
    s = report["summary"]
    sev = s["findings_by_severity"]
    click.echo(
        f"porter: {s['files_scanned']} files scanned, {s['files_changed']} changed, {s['edits']} edits, "
        f"{s['files_skipped']} skipped, {s['files_failed']} failed; findings: {sev['error']} error, "
        f"{sev['warning']} warning, {sev['info']} info"
    )
    for f in report["files"]:
        if f["status"] == "failed" or f["status"] == "skipped" and verbosity >= 0:
            click.echo(printable(f"porter: {f['status']}: {f['path']}: {f.get('reason', '')}"), err=True)
    assert done.report_dir is not None  # written: not a --diff
    click.echo(printable(f"porter: output in {done.out}; report in {done.report_dir / 'report.html'}"))
    if done.not_written:
        click.echo(
            f"porter: error: {len(done.not_written)} file(s) could not be written (listed above as failed, "
            f"and in the report)",
            err=True,
        )
        return 2
    return 1 if s["files_failed"] else 0
