"""Which target line the checks compare with, and the package table as it reads there."""

from __future__ import annotations

from porter.doctor.runtime import Runtime, vendor_line
from porter.tables.packages import PackageEntry, PackageTable, load_package_table
from porter.tables.versions import ANY_VERSION, available_versions


def known_lines(target: str) -> list[str]:
    return [v for v in available_versions(target) if v != ANY_VERSION]


def choose_line(target: str, requested: str | None, runtime: Runtime) -> str:
    """--target-version when given; otherwise the line the installed vendor package (torch_mlu,
    torch_npu) is built for when porter knows it, else the newest; "any" on hip (one table for
    every release)."""
    lines = known_lines(target)
    if not lines:
        return ANY_VERSION
    if requested:
        return requested
    installed = vendor_line(runtime.vendor_version, target)
    return installed if installed in lines else lines[-1]


def line_table(target: str, line: str) -> PackageTable:
    return load_package_table(target).for_line(line)


def releases(entry: PackageEntry | None, line: str) -> str | None:
    """The specifier of the releases that work on `line` (None: no bound is known)."""
    return entry.releases(line) if entry is not None else None


def admits(spec: str, version: str) -> bool:
    """Whether `version` is one of `spec`'s releases (pre-releases and local labels count)."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return SpecifierSet(spec).contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


def only_too_new(spec: str, version: str) -> bool:
    """Whether `version` misses `spec` only by its upper bounds (< and <=): a release newer
    than the line's torch allows, which the emulator's own newer torch still runs."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        missed = [s for s in SpecifierSet(spec) if not s.contains(Version(version), prereleases=True)]
    except InvalidVersion:
        return False
    return bool(missed) and all(s.operator in ("<", "<=") for s in missed)
