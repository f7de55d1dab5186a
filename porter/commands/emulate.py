"""`porter run --emulate mlu|npu -- CMD ...` and `porter verify OUT`: thin click commands over
porter.emulator and porter.verify. Neither imports torch in porter's own process."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from porter.commands.options import HELP, FiniteFloatRange
from porter.emulator.targets import DEVICES

# The devices the emulator can be (porter/emulator/targets.py): a plain record, no torch.
EMULATE_TARGETS = tuple(DEVICES)


def _checked(version: str | None, target: str) -> str | None:
    from porter.emulator.apis import versions

    known = versions(target)
    if version is not None and version not in known:
        package = DEVICES[target].package
        listed = ", ".join(known) if known else f"none: porter has no {package} API list yet"
        raise click.BadParameter(
            f"{version} is not a known {package} line (known: {listed})", param_hint="--target-version"
        )
    return version


@click.command("run", context_settings={**HELP, "ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--emulate", type=click.Choice(EMULATE_TARGETS), required=True, help="The device to emulate on the CPU.")
@click.option(
    "--devices",
    type=click.IntRange(1, 16),
    default=None,
    help="Cards the emulated machine has (default 1, or as many as the visible-devices variable names: "
    "MLU_VISIBLE_DEVICES, ASCEND_RT_VISIBLE_DEVICES); that variable selects among them.",
)
@click.option(
    "--target-version",
    "version",
    default=None,
    help="Vendor package line whose API list torch.mlu / torch.npu exposes (default: the newest listed).",
)
@click.argument("cmd", nargs=-1, required=True, type=click.UNPROCESSED)
def run_cmd(emulate: str, devices: int | None, version: str | None, cmd: tuple[str, ...]) -> None:
    """Run CMD (python, torchrun, a script) with an emulated torch_mlu or torch_npu; exits with CMD's code."""
    from porter.emulator.launch import EmulatorError, run

    try:
        code = run(list(cmd), devices, _checked(version, emulate), target=emulate)
    except EmulatorError as exc:
        click.echo(f"porter: error: {exc}", err=True)
        code = 2
    sys.exit(code)


@click.command("verify", context_settings=HELP)
@click.argument("out", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(("text", "json", "github")), default="text", show_default=True)
@click.option(
    "--fail-on",
    type=click.Choice(("error", "warning")),
    default="error",
    show_default=True,
    help="Lowest severity that makes verify fail (exit 1).",
)
@click.option(
    "--exit-zero", is_flag=True, help="Exit 0 even when findings fail the check (errors of porter itself still exit 2)."
)
@click.option(
    "--timeout",
    type=FiniteFloatRange(1),
    default=60,
    show_default=True,
    help="Seconds allowed per module import, of its own time (waiting for a CPU does not count).",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1),
    default=None,
    help="Import processes in parallel (default: cores, at most 4).",
)
@click.option("--no-lora", is_flag=True, help="Skip the LoRA smoke run of porter_lora/.")
@click.option(
    "--run", "run_command", default=None, help="A smoke command to run in OUT under the emulator (shell syntax)."
)
@click.option(
    "--devices",
    type=click.IntRange(1, 16),
    default=None,
    help="Emulated cards for --run (default 1, or the target's visible-devices variable).",
)
def verify(
    out: Path,
    fmt: str,
    fail_on: str,
    exit_zero: bool,
    timeout: float,
    jobs: int | None,
    no_lora: bool,
    run_command: str | None,
    devices: int | None,
) -> None:
    """Prove the ported tree OUT runs: import its modules, train porter_lora on 1 and 2
    emulated devices, run --run; target and version come from OUT/porter_report/report.json.
    Exit 0 ok, 1 findings, 2 error."""
    from porter.emulator.launch import EmulatorError
    from porter.verify.progress import Progress
    from porter.verify.report import RENDERERS, write_report
    from porter.verify.run import VerifyError, VerifyOptions, verify_tree

    opts = VerifyOptions(timeout=timeout, jobs=jobs, lora=not no_lora, run=run_command, run_devices=devices)
    try:
        progress = Progress()  # a line on stderr when it is a terminal
        try:
            result = verify_tree(out, opts, progress)
        finally:
            progress.close()
        path = write_report(result)
    except (VerifyError, EmulatorError) as exc:
        click.echo(f"porter: error: {exc}", err=True)
        sys.exit(2)
    except OSError as exc:  # verify.json not written: the path and why
        from porter.core.files import describe

        click.echo(f"porter: error: {describe(exc)}", err=True)
        sys.exit(2)
    click.echo(RENDERERS[fmt](result), nl=False)
    click.echo(f"porter: wrote {path}", err=True)
    levels = ("error",) if fail_on == "error" else ("error", "warning")
    failed = any(f.severity in levels for f in result.findings)
    sys.exit(0 if not failed or exit_zero else 1)
