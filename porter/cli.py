"""The command line: thin click commands over porter's library calls (porter/api.py for
`convert` and `check`); most of them are in porter/commands/, loaded when they run."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import click

from porter import __version__
from porter.commands.options import HELP, usage_errors
from porter.core.terminal import printable
from porter.rules import TARGETS, RuleError
from porter.rules.terms import TARGET_HELP, VERSIONED_PACKAGES


class _LazyGroup(click.Group):
    """Commands kept in other modules are imported only when they run: start-up time is
    paid by every CI check, and `porter check` needs neither jinja2 nor the report code."""

    lazy = {
        "check": "porter.commands.check:check",
        "config": "porter.commands.check:config_cmd",
        "convert": "porter.commands.convert:convert",
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
        out.append(f"  For {VERSIONED_PACKAGES.get(target, target)}: {', '.join(rule.versions)}")
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
    help=f"{TARGET_HELP}; default: `target` in [tool.porter].",
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
    from porter.config import ConfigError, required_target, settings_for
    from porter.core.files import describe
    from porter.core.tree import LORA_DIR
    from porter.lora.render import EditedFiles, render_lora

    try:  # TREE's configuration, as convert and check read it (--target over it)
        settings = settings_for(tree, True, target=target)
    except ConfigError as exc:
        click.echo(printable(f"porter: error: {exc}"), err=True)
        sys.exit(2)
    with usage_errors():
        chosen = required_target(settings)

    try:
        # -o names the folder (made if missing); the default TREE/porter_lora is reached
        # from TREE without following a link. Nothing below either is written through one.
        written = render_lora(
            tree, out or tree / LORA_DIR, chosen, deepspeed=deepspeed, root=None if out else tree, keep_edits=not force
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
