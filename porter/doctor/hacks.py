"""Known hacks on target machines, detected and explained.

The one met most: Cambricon's deepspeed-mlu (imported as `deepspeed`) with its metadata
folder renamed to upstream's `deepspeed-X.dist-info`, sometimes with `Name:` edited too, so
that version checks asking for "deepspeed" pass. A renamed folder still lists its original
name in RECORD (written at install time), and an unedited one says `Name: deepspeed-mlu`.
"""

from __future__ import annotations

import re

from porter.doctor.installed import Dist, Installed
from porter.doctor.lines import releases
from porter.doctor.model import FAIL, OK, Result
from porter.doctor.targets import doctor_target
from porter.tables.packages import PackageTable
from porter.tables.plain_requirement import canonical_name

NAME = "renamed-dist-info"
_FOLDER = re.compile(r"^(?P<name>[^-]+)-.*\.(?:dist|egg)-info$")


def renamed(dist: Dist) -> tuple[str, str] | None:
    """(the folder's original name, what says so) when `dist`'s metadata folder was renamed."""
    if dist.folder is None or dist.folder_name is None:
        return None
    evidence, original = [], None
    if dist.folder_name != dist.name:
        evidence.append(f"its METADATA says Name: {dist.name}")
        suffix = ".egg-info" if dist.folder.name.endswith(".egg-info") else ".dist-info"
        original = f"{dist.name.replace('-', '_')}-{dist.version}{suffix}"
    for recorded in dist.recorded_folders:
        match = _FOLDER.match(recorded)
        if match and canonical_name(match.group("name")) != dist.folder_name:
            evidence.append(f"its RECORD lists {recorded}")
            original = recorded  # the name it was installed under
            break
    return (original, " and ".join(evidence)) if original else None


def check_renamed(installed: Installed, table: PackageTable, target: str, line: str) -> Result:
    found = [(dist, *hit) for dist in installed.dists if (hit := renamed(dist))]
    if not found:
        return _both_deepspeeds(installed, table, target, line)
    found.sort(key=lambda item: item[0].folder_name != "deepspeed")  # deepspeed's first
    dist, original, evidence = found[0]
    more = (
        f" (and {len(found) - 1} more: {', '.join(_folder_name(d) for d, _, _ in found[1:])})" if len(found) > 1 else ""
    )
    assert dist.folder is not None
    undo = f"mv {dist.folder} {dist.folder.parent / original}"
    if dist.folder_name == "deepspeed" and "deepspeed-mlu" in (dist.name, _project(original)):
        return Result(
            NAME,
            FAIL,
            f"{dist.folder.name} is Cambricon's deepspeed-mlu {dist.version} renamed to upstream's "
            f"name ({evidence}): importlib.metadata, transformers and accelerate take it for "
            f"upstream DeepSpeed {dist.version}, and installing deepspeed (pip install deepspeed, a "
            f"requirement on it) puts upstream's CUDA DeepSpeed over its files{more}",
            _deepspeed_fix(undo, dist, table, target, line),
        )
    return Result(
        NAME,
        FAIL,
        f"{dist.folder.name} holds {_project(original)} {dist.version}, renamed ({evidence}): "
        f"pip and importlib.metadata see {dist.folder_name} where it is not installed{more}",
        f"Undo the rename: {undo}",
    )


def _folder_name(dist: Dist) -> str:
    return dist.folder.name if dist.folder is not None else dist.name


def _project(folder: str) -> str:
    match = _FOLDER.match(folder)
    return canonical_name(match.group("name")) if match else folder


def _deepspeed_fix(undo: str, dist: Dist, table: PackageTable, target: str, line: str) -> str:
    edited = " and set Name: deepspeed-mlu in its METADATA" if dist.name != "deepspeed-mlu" else ""
    entry = table.by_distribution("deepspeed")
    vendor = doctor_target(target).vendor_deepspeed()
    # Where the target has no DeepSpeed of its own, or on the line where the vendor's is the one.
    if vendor is None or entry is None or entry.action == "replace":
        return f"Undo the rename: {undo}{edited}"
    spec = releases(entry, line) or ""
    return (
        f"Undo the rename ({undo}{edited}), then pip uninstall -y {vendor} && "
        f'pip install "deepspeed{spec}" (upstream DeepSpeed is the one for {target} {line})'
    )


def _both_deepspeeds(installed: Installed, table: PackageTable, target: str, line: str) -> Result:
    own = doctor_target(target).vendor_deepspeed()
    upstream, vendor = installed.named("deepspeed"), installed.named(own) if own else []
    if own and upstream and vendor:
        entry = table.by_distribution("deepspeed")
        keep = own if entry is None or entry.action == "replace" else "deepspeed"
        drop = "deepspeed" if keep == own else own
        return Result(
            NAME,
            FAIL,
            f"deepspeed {upstream[0].version} and {own} {vendor[0].version} are both "
            f"installed: both write the deepspeed package, the one installed last over the other's files",
            f"pip uninstall -y {drop} {keep}, then install {keep} again ({keep} is the one for {target} {line})",
        )
    return Result(NAME, OK, "no renamed metadata folders")
