"""The command line: thin click commands over porter's library calls."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import click

from porter import __version__
from porter.core.terminal import printable
from porter.commands.options import (
    HELP,
    NO_TARGET,
    FiniteFloatRange,
    cache_options,
    checked_version,
    config_options,
    exclude_options,
    settings_text,
    chosen_cache_dir,
    codes,
    ignore_option,
    jobs_option,
    version_option as _version,
)
from porter.rules import TARGETS, RuleError


class _LazyGroup(click.Group):
    """Commands kept in other modules are imported only when they run: start-up time is
    paid by every CI check, and `porter check` needs neither jinja2 nor the report code."""

    lazy = {
        "check": "porter.commands.check:check",
        "config": "porter.commands.check:config_cmd",
        "doctor": "porter.commands.doctor:doctor",
        "ops": "porter.commands.check:ops",
        "report": "porter.commands.report:report",
        "run": "porter.commands.emulate:run_cmd",
        "verify": "porter.commands.emulate:verify",
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def resolve_command(self, ctx: click.Context, args: list[str]):
        # click says "No such command"; a near miss (`porter chek`) also gets the likely name.
        name = args[0] if args else ""
        if name and not name.startswith("-") and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            from porter.core.suggest import closest, did_you_mean

            hint = did_you_mean(closest(name, self.list_commands(ctx)))
            if hint:
                ctx.fail(f"No such command {name!r}; {hint}")
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy:
            module, attr = self.lazy[name].split(":")
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)


@click.group(cls=_LazyGroup, context_settings=HELP)
@click.version_option(__version__, prog_name="porter")
def main() -> None:
    """Port PyTorch CUDA training repositories to Cambricon MLU and Hygon DCU / ROCm."""
    import signal

    # Over a file-size limit (ulimit -f) a write fails with EFBIG, which porter reports,
    # instead of the signal that would kill it mid-write.
    if hasattr(signal, "SIGXFSZ"):
        try:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        except ValueError:  # not the main thread (porter called from a thread): left as it is
            pass


@main.command(context_settings=HELP)
@click.argument("src", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--target",
    "-t",
    type=click.Choice(TARGETS),
    default=None,
    help="mlu (Cambricon, torch_mlu) or hip (Hygon DCU / ROCm); default: `target` in [tool.porter].",
)
@_version
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
@click.option(
    "--max-file-size",
    "max_mb",
    type=FiniteFloatRange(min=0),
    default=10.0,
    show_default=True,
    help="Files larger than this many MB are copied as they are, not converted (reported as skipped); 0: no limit.",
)
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
    from porter.core.datafiles import disable_user_cache
    from porter.core.files import describe

    if no_cache:
        disable_user_cache()
    from porter.convert import ConvertOptions, convert as run_convert
    from porter.engine.output import DestinationError

    if in_place and (out or diff_only):
        raise click.UsageError("--in-place cannot be combined with --out or --diff")
    if diff_only and report_dir:
        raise click.UsageError("--diff writes nothing: it cannot be combined with --report-dir")
    if quiet and verbose:
        raise click.UsageError("--quiet and --verbose cannot be combined")
    # The configuration of SRC's project ([tool.porter] / porter.toml), options over it, as
    # `porter check` reads it: target, version, codes, excludes, per-file ignores, rules.
    from porter.config import file_selection, settings_for
    from porter.config import ConfigError

    chosen = {
        key: codes(value, option) or None
        for key, value, option in (
            ("select", select, "--select"),
            ("extend_select", extend_select, "--extend-select"),
            ("ignore", ignore, "--ignore"),
        )
    }
    try:
        settings = settings_for(
            src,
            config or not isolated,
            target=target,
            target_version=version,
            **chosen,
            exclude=exclude or None,
            extend_exclude=extend_exclude,
        )
        _, files = file_selection([src], settings)
    except ConfigError as exc:
        click.echo(printable(f"porter: error: {exc}"), err=True)
        sys.exit(2)
    if show_settings:
        click.echo(settings_text(settings, src), nl=False)
        return
    if settings.target is None:
        raise click.UsageError(NO_TARGET)
    version = checked_version(settings.target, settings.target_version)
    cache = chosen_cache_dir(cache_dir, no_cache)
    max_bytes = int(max_mb * 1024 * 1024) if max_mb else None
    opts = ConvertOptions(
        settings.target,
        version,
        out,
        in_place,
        diff_only,
        force,
        jobs,
        settings.select,
        settings.ignore,
        cache,
        extend=settings.extend_select,
        files=files,
        rule_files=settings.project_rules,
        report_dir=report_dir,
        max_bytes=max_bytes,
    )
    from porter.core.progress import QUIET_START, Progress, watching

    try:
        with watching(Progress(label="porter convert", delay=QUIET_START)):  # on a terminal's stderr only
            done = run_convert(src, opts)
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
        from porter.convert import patch_bytes

        sys.stdout.buffer.write(patch_bytes(done.run))
        return
    sys.exit(_said(done, src, -1 if quiet else 1 if verbose else 0))


def _said(done, src: Path, verbosity: int) -> int:
    """Say what a convert run did: the findings left for a person (errors and warnings; info
    too when verbose; none when quiet), the counts, and where OUT and report.html are. The
    exit code."""
    from porter.check.shown import display_root, use_color
    from porter.check.text import findings_text

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
    if done.kept_lora_edits and done.place is not None:
        names = ", ".join(str(p) for p in done.kept_lora_edits)
        click.echo(
            printable(
                f"porter: warning: kept {names}: different from what porter writes there (edited?); "
                f"`porter lora {done.out} --target {done.report['target']} -o {done.place.lora_dir} "
                f"--force` replaces it"
            ),
            err=True,
        )
    if verbosity >= 0:
        shown = ("error", "warning", "info") if verbosity > 0 else ("error", "warning")
        left = [f for r in done.run.results for f in r.findings if f.severity in shown]
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
    assert done.place is not None
    click.echo(printable(f"porter: output in {done.out}; report in {done.place.report_dir / 'report.html'}"))
    if done.not_written:
        click.echo(
            f"porter: error: {len(done.not_written)} file(s) could not be written (listed above as failed, "
            f"and in the report)",
            err=True,
        )
        return 2
    return 1 if s["files_failed"] else 0


@main.command("rules", context_settings=HELP)
@click.argument("code", required=False)
@click.option("--target", "-t", type=click.Choice(TARGETS), default=None, help="Only this target's rules.")
@click.option(
    "--config",
    "config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="The project's configuration (default: found from the working directory, as check finds it).",
)
@click.option("--isolated", is_flag=True, help="porter's rules only: ignore every configuration file.")
def rules_cmd(code: str | None, target: str | None, config: Path | None, isolated: bool) -> None:
    """List rule codes and names, or explain one rule (with the project's own rules and codemods)."""
    from porter.verify.codes import for_target as runtime_rules
    from porter.config import project_rule_files
    from porter.rules import load_rules

    targets = [target] if target else list(TARGETS)
    try:
        own = project_rule_files(Path("."), config, isolated)
        sets = {t: load_rules(t, own) for t in targets}
    except (ValueError, RuleError) as exc:  # ConfigError, RuleError: naming the file and the key
        click.echo(printable(f"porter: error: {exc}"), err=True)
        sys.exit(2)
    problems = dict.fromkeys(p for t in targets for p in sets[t].problems)
    for path, why in problems:
        click.echo(printable(f"porter: error: codemod {path}: {why}"), err=True)
    if code is None:
        for t in targets:
            for rule in (*sets[t].rules, *runtime_rules(t)):
                click.echo(printable(f"{rule.code}  {t:<3}  {rule.name:<36} {rule.summary}"))  # a project's own too
        sys.exit(2 if problems else 0)
    every = [(t, r) for t in targets for r in (*sets[t].rules, *runtime_rules(t))]
    found = [(t, r) for t, r in every if r.code == code.upper()]
    if not found:
        from porter.core.suggest import closest_codes, did_you_mean

        hint = did_you_mean(closest_codes(code, {r.code for _, r in every}))
        raise click.UsageError(f"no rule {code}; {hint + ' ' if hint else ''}see `porter rules` for the list")
    for t, rule in found:
        click.echo(printable(_explained(t, rule), lines=True))  # a project's rule is the project's text


def _explained(target: str, rule) -> str:
    out = [
        f"{rule.code} {rule.name} [{target}]  (kind {rule.kind}, severity {rule.severity}, fix {rule.applicability})",
        f"\n  What it does: {rule.summary}",
        f"  Why: {rule.why}",
    ]
    if rule.fix:
        out.append(f"  Fix: {rule.fix}")
    if rule.suggestion:
        out.append(f"  Suggestion: {rule.suggestion}")
    if rule.versions:
        out.append(f"  For torch_mlu: {', '.join(rule.versions)}")
    for api, source in rule.api_sources.items():
        out.append(f"  {api} (not in the vendor's API list): {source}")
    for ex in rule.examples:
        where = f" (in {ex.file})" if ex.file else ""
        out.append(f"\n  Example{where}:\n" + _indented(ex.setup + "\n" + ex.before if ex.setup else ex.before))
        out.append("  becomes:\n" + _indented(ex.after) if ex.after is not None else "  is reported, not changed")
    return "\n".join(out) + "\n"


def _indented(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


@main.command("lora", context_settings=HELP)
@click.argument("tree", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--target",
    "-t",
    type=click.Choice(TARGETS),
    default=None,
    help="mlu (Cambricon, torch_mlu) or hip (Hygon DCU / ROCm); default: `target` in [tool.porter].",
)
@click.option("--deepspeed", is_flag=True, help="Also write ds_config.json and use it.")
@click.option(
    "-o", "--out", type=click.Path(path_type=Path), default=None, help="Where to write (default: TREE/porter_lora)."
)
@click.option(
    "--force", is_flag=True, help="Overwrite files there that differ from what porter writes (edited by hand)."
)
def lora_cmd(tree: Path, target: str | None, deepspeed: bool, out: Path | None, force: bool) -> None:
    """Render the LoRA training entry point (porter_lora/) for a ported TREE.

    A file there that differs from what porter would write (a train_lora.py you edited) is
    not overwritten without --force: porter names it and writes nothing."""
    from porter.config import settings_for
    from porter.config import ConfigError
    from porter.core.files import describe
    from porter.lora.render import EditedFiles, render_lora
    from porter.core.tree import LORA_DIR

    try:  # TREE's configuration, as convert and check read it (--target over it)
        target = settings_for(tree, True, target=target).target
    except ConfigError as exc:
        click.echo(printable(f"porter: error: {exc}"), err=True)
        sys.exit(2)
    if target is None:
        raise click.UsageError(NO_TARGET)

    try:
        # -o names the folder (made if missing); the default TREE/porter_lora is reached
        # from TREE without following a link. Nothing below either is written through one.
        written = render_lora(
            tree, out or tree / LORA_DIR, target, deepspeed=deepspeed, root=None if out else tree, keep_edits=not force
        )
    except EditedFiles as exc:
        for path in exc.paths:
            click.echo(printable(f"porter: error: {path} differs from what porter writes there (edited?)"), err=True)
        click.echo("porter: nothing written; pass --force to overwrite them", err=True)
        sys.exit(2)
    except OSError as exc:
        click.echo(printable(f"porter: error: {describe(exc)}"), err=True)
        sys.exit(2)
    for path in written:
        click.echo(printable(f"porter: wrote {path}"))


def run() -> None:
    """The `porter` command: `main`, then an exit that skips the interpreter's tear-down.

    Freeing every object of a run one by one costs ~15 ms that nobody waits for; all of
    porter's files are closed by then, so the output is flushed and the process ends.
    An output that cannot be written (stdout closed, on a full disk) ends it with one line
    on stderr, never a traceback; a reader that went away (`porter check | head`) quietly.
    """
    if sys.stdout is None:  # `porter ... >&-`: nothing could be printed, and fd 1 would be reused
        _say("porter: error: standard output is closed; nothing could be printed")
        os._exit(2)
    try:
        main()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    except OSError as exc:  # what no command catches: writing the output
        code = _unwritten(exc)
    if code is not None and not isinstance(code, int):
        _say(str(code))  # sys.exit("message"): as Python would
        code = 1
    try:
        sys.stdout.flush()
    except ValueError:  # closed by the command
        pass
    except OSError as exc:
        code = _unwritten(exc) or code
    try:
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # stderr closed or full: nothing left to say it on
        pass
    os._exit(code or 0)


def _unwritten(exc: OSError) -> int:
    """The exit code for an OSError that reached `porter` itself, said on stderr."""
    import errno

    if exc.errno == errno.EPIPE:  # the reader left (`| head`): quietly, as good CLIs do (click exits 1 too)
        return 1
    from porter.core.files import describe

    _say(
        printable(
            f"porter: error: {describe(exc) if exc.filename else f'cannot write the output: {exc.strerror or exc}'}"
        )
    )
    return 2


def _say(line: str) -> None:
    if sys.stderr is not None:
        try:
            print(line, file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass
