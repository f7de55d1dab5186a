"""`porter run --emulate mlu -- CMD ...` and `porter verify OUT`: thin click commands over
porter.emulator and porter.verify. Neither imports torch in porter's own process."""

from __future__ import annotations

import sys
from pathlib import Path

import click

EMULATE_TARGETS = ("mlu",)


def _versions() -> list[str]:
    from porter.emulator.apis import versions

    return versions()


def _checked(version: str | None) -> str | None:
    if version is not None and version not in _versions():
        raise click.BadParameter(f"{version} is not a known torch_mlu line (known: {', '.join(_versions())})",
                                 param_hint="--target-version")
    return version


@click.command("run", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--emulate", type=click.Choice(EMULATE_TARGETS), required=True, help="The device to emulate on the CPU.")
@click.option("--devices", type=click.IntRange(1, 16), default=None, help="Emulated device count (default: MLU_VISIBLE_DEVICES, else 1).")
@click.option("--target-version", "version", default=None, help="torch_mlu line whose API list torch.mlu exposes (default: the newest).")
@click.argument("cmd", nargs=-1, required=True, type=click.UNPROCESSED)
def run_cmd(emulate: str, devices: int | None, version: str | None, cmd: tuple[str, ...]) -> None:
    """Run CMD (python, torchrun, a script) with an emulated torch_mlu; exits with CMD's code."""
    from porter.emulator.launch import EmulatorError, run

    try:
        code = run(list(cmd), devices, _checked(version))
    except EmulatorError as exc:
        click.echo(f"porter: error: {exc}", err=True)
        code = 2
    sys.exit(code)
