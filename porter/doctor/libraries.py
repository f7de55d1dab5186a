"""The training libraries (transformers, accelerate, peft, deepspeed, LLaMA-Factory) against
the package table on the target line: installed releases outside the ones that work fail,
with the pip command that installs one that does."""

from __future__ import annotations

from porter.doctor.installed import Dist, Installed
from porter.doctor.lines import admits, only_too_new, releases
from porter.doctor.model import FAIL, OK, SKIP, WARN, Result
from porter.doctor.targets import doctor_target
from porter.tables.packages import PackageTable

LIBRARIES = ("transformers", "accelerate", "peft", "deepspeed", "llamafactory")


def check_library(
    name: str, installed: Installed, table: PackageTable, target: str, line: str, emulated: bool = False
) -> Result:
    # A distribution may provide the library under another name (deepspeed-mlu: deepspeed).
    providers = doctor_target(target).providers.get(name, (name,))
    dist = next((d for d in map(installed.find, providers) if d), None)
    if dist is None:
        return Result(name, SKIP, "not installed")
    return judge(name, dist, table, target, line, emulated)


def judge(name: str, dist: Dist, table: PackageTable, target: str, line: str, emulated: bool = False) -> Result:
    """A distribution against its entry (by its METADATA Name, whatever its folder says).
    Under the emulator torch is the host's, newer than the line's: a release too new for the
    line's torch runs there, and is a warning about the real machine instead of a failure."""
    label = f"{dist.name} {dist.version}"
    if dist.folder is not None and dist.folder_name and dist.folder_name != dist.name:
        label += f" [in {dist.folder.name}: see renamed-dist-info]"
    entry = table.by_distribution(dist.name)
    where = f"{target} {line}" if line != "any" else target
    if entry is None:
        return Result(name, OK, f"{label} (not in porter's {target} table)")
    if entry.action == "replace":
        return Result(
            name,
            FAIL,
            f"{label} is installed; on {where} use {entry.replacement}: {entry.reason}",
            entry.suggestion or f"pip uninstall -y {dist.name} && pip install {entry.replacement}",
        )
    if entry.action == "drop":
        return Result(
            name,
            FAIL,
            f"{label} does not run on {where}: {entry.reason.rstrip('.')}",
            f"pip uninstall -y {dist.name}" + (f"; {entry.suggestion}" if entry.suggestion else ""),
        )
    spec = releases(entry, line)
    if spec and not admits(spec, dist.version):
        why = f": {entry.releases_why.rstrip('.')}" if entry.releases_why else ""
        detail = f"{label} is not one of the releases that work on {where} ({spec}){why}"
        if emulated and only_too_new(spec, dist.version):
            return Result(
                name,
                WARN,
                f"{detail} (the emulator's newer torch runs it; the line's torch does not)",
                f'pip install "{dist.name}{spec}" on the {doctor_target(target).label} machine',
            )
        return Result(name, FAIL, detail, f'pip install "{dist.name}{spec}"')
    if entry.action == "flag":
        return Result(
            name,
            WARN,
            f"{label} is installed: {entry.reason.rstrip('.')}",
            entry.suggestion or f"pip uninstall -y {dist.name}",
        )
    return Result(name, OK, f"{label} ({f'{spec} work on {where}' if spec else f'no release bound known for {where}'})")
