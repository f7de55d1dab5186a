"""`porter doctor`: check the installed environment of the target machine (or of `porter run
--emulate mlu|npu`). A thin click command over porter.doctor; torch is imported when it runs."""

from __future__ import annotations

import sys

import click

from porter.commands.options import HELP, FiniteFloatRange
from porter.rules.terms import TARGET_HELP, TARGETS


@click.command("doctor", context_settings=HELP)
@click.option(
    "--target",
    "-t",
    type=click.Choice(TARGETS),
    default=None,
    help=f"{TARGET_HELP}; default: the target whose vendor package imports (torch_mlu, torch_npu), "
    "hip where torch is a ROCm build.",
)
@click.option(
    "--target-version",
    "version",
    default=None,
    help="The vendor package's torch line to check against (e.g. 2.4 for torch_mlu, 2.8 for torch_npu; an "
    "unknown one lists the known ones); default: the installed torch_mlu's / torch_npu's line, else the newest.",
)
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@click.option(
    "--timeout",
    type=FiniteFloatRange(5),
    default=120,
    show_default=True,
    help="Seconds allowed for the process-group check.",
)
def doctor(target: str | None, version: str | None, fmt: str, timeout: float) -> None:
    """Check this machine's environment for the target, one line per check with its fix.

    torch and the vendor extension, the cards, bf16/fp16, the process-group backend with 2
    processes, library versions against porter's package table, CUDA builds of packages and
    known hacks. Exit codes: 0 every check passed (warnings allowed), 1 a check failed,
    2 usage error."""
    from porter.doctor.lines import known_lines
    from porter.doctor.render import render_json, render_text
    from porter.doctor.model import exit_code
    from porter.doctor.run import detect_hint, detect_target, run_doctor

    if target is None:
        target = detect_target()
        if target is None:
            raise click.UsageError(f"no target found: {detect_hint()}; pass --target {'|'.join(TARGETS)}")
    lines = known_lines(target)
    if version is not None and version not in lines:
        known = ", ".join(lines) or "none: one table for every release"
        raise click.BadParameter(
            f"{version} is not a known line for {target} (known: {known})", param_hint="--target-version"
        )
    done = run_doctor(target, version, timeout)
    click.echo(
        render_json(done.results) if fmt == "json" else render_text(done.results, done.target, done.line), nl=False
    )
    sys.exit(exit_code(done.results))
