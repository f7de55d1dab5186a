"""Third-party package tables: what runs where, per target (op_tables/<target>/packages.toml).

One entry per distribution says keep, replace, drop or flag, with porter's reason, a
suggestion, a source and the severity of the finding a use produces. Requirement scans
ask by distribution name (PEP 503 normalised, or a glob for families such as
cupy-cuda12x); code scans ask by import name. The file is validated on load, so a typo
in the data fails loudly with the file and key instead of silently matching nothing.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from porter.core.datafiles import data_dir, load_toml
from porter.core.severity import Severity
from porter.core.toml import tomllib
from porter.rules.kinds import PACKAGE_ACTIONS
from porter.rules.terms import SEVERITIES
from porter.tables.plain_requirement import canonical_name as canonicalize_name

Action = Literal["keep", "replace", "drop", "flag"]
ACTIONS: tuple[Action, ...] = PACKAGE_ACTIONS  # type: ignore[assignment]
_REQUIRED = {"action", "import_names", "reason", "source", "severity"}
_OPTIONAL = {
    "replacement",
    "suggestion",
    "name_patterns",
    "strip_local_version",
    "imports_run",
    "vendor_build",
    "releases",
    "releases_by_line",
    "releases_why",
    "releases_source",
    "lines",
    "repositories",
}
# What a `lines."<line>"` table may change of an entry on one target line (deepspeed: renamed
# to Cambricon's deepspeed-mlu on the torch 2.1 line, upstream's own MLU accelerator on 2.4).
_LINE_FIELDS = {"action", "replacement", "reason", "suggestion", "source", "severity"}
_TOP_LEVEL = {"schema", "target", "packages"}


@dataclass(frozen=True)
class PackageEntry:
    """What porter says about one distribution on one target."""

    name: str
    action: Action
    import_names: tuple[str, ...]
    reason: str
    source: str
    severity: Severity
    replacement: str | None = None
    suggestion: str | None = None
    name_patterns: tuple[str, ...] = ()
    strip_local_version: bool = False
    # The package's imports run on the target (only pinning the CUDA wheel is a problem, as
    # triton on ROCm): a requirement is reviewed, an import is not reported.
    imports_run: bool = False
    # Kept, but only the target's own build of it works (torchvision, torchaudio: compiled
    # against one torch): a requirement gets the `vendor-build` rule's finding.
    vendor_build: bool = False
    # The releases that work on the target (a PEP 440 specifier), per target line: a pin that
    # excludes them all, or a range that admits others, is a finding (the `releases` outcome).
    releases_by_line: tuple[tuple[str, str], ...] = ()  # (line, specifier): tuples keep the entry hashable
    releases_any_line: str | None = None
    releases_why: str | None = None
    releases_source: str | None = None
    # Per-line changes of the action fields ({line: {field: value}}), applied by PackageTable.for_line.
    lines: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    # Where its source lives ("github.com/nvidia/apex"): a `git clone` or `pip install git+URL`
    # of it builds this distribution, whatever name the command gives it.
    repositories: tuple[str, ...] = ()

    def releases(self, line: str | None) -> str | None:
        """The specifier of releases that work on `line` (None: no bound is known)."""
        return dict(self.releases_by_line).get(line or "", self.releases_any_line)

    def on_line(self, line: str | None) -> PackageEntry:
        """The entry as it reads on one target line (its `lines` table applied)."""
        changes = dict(dict(self.lines).get(line or "", ()))
        if not changes:
            return self
        if changes.get("action", self.action) != "replace":
            changes["replacement"] = None  # kept or dropped there: nothing to rename to
        return replace(self, **changes)


# eq=False: identity equality and hashing, since the mappings inside are not hashable.
@dataclass(frozen=True, eq=False)
class PackageTable:
    """The package table of one target."""

    target: str
    path: Path
    entries: Mapping[str, PackageEntry]
    imports: Mapping[str, PackageEntry]

    def by_distribution(self, name: str) -> PackageEntry | None:
        """Entry for a distribution name (any spelling PEP 503 folds together), else a glob match."""
        canonical = canonicalize_name(name)
        entry = self.entries.get(canonical)
        if entry is not None:
            return entry
        for candidate in self.entries.values():
            if any(fnmatch.fnmatchcase(canonical, pattern) for pattern in candidate.name_patterns):
                return candidate
        return None

    def by_import(self, module: str) -> PackageEntry | None:
        """Entry for the distribution that provides the top-level module of `module`."""
        return self.imports.get(module.split(".", 1)[0])

    def by_repository(self, url: str) -> PackageEntry | None:
        """Entry whose source repository `url` names (git+https://github.com/NVIDIA/apex.git@25.04,
        https://github.com/NVIDIA/apex, git@github.com:NVIDIA/apex.git), else None."""
        where = repository_of(url)
        if where is None:
            return None
        return next((e for e in self.entries.values() if where in e.repositories), None)

    def for_line(self, line: str | None) -> PackageTable:
        """The table as it reads on one target line (each entry's `lines` table applied);
        `entry.releases(line)` still needs the line, which the caller keeps."""
        if not any(line in dict(entry.lines) for entry in self.entries.values()):
            return self
        entries = {name: entry.on_line(line) for name, entry in self.entries.items()}
        imports = {module: entries[entry.name] for module, entry in self.imports.items()}
        return PackageTable(self.target, self.path, MappingProxyType(entries), MappingProxyType(imports))


def repository_of(url: str) -> str | None:
    """ "host/owner/name" (lower case) of a git repository URL, else None."""
    match = re.match(r"(?:git\+)?(?:[a-z]+://)?(?:[^@/]+@)?([^/:]+)[/:]([^/]+)/([^/@#?]+)", url.strip(), re.IGNORECASE)
    if match is None or "." not in match.group(1):
        return None
    name = match.group(3).removesuffix(".git")
    return f"{match.group(1)}/{match.group(2)}/{name}".lower()


def _fail(path: Path, key: str, problem: str) -> ValueError:
    return ValueError(f"{path}: {key}: {problem}")


def _entry(path: Path, name: str, raw: object) -> PackageEntry:
    key = f"packages.{name}"
    if not isinstance(raw, dict):
        raise _fail(path, key, "must be a table")
    if canonicalize_name(name) != name:
        raise _fail(path, key, f"name must be PEP 503 normalised ({canonicalize_name(name)!r})")
    unknown = sorted(set(raw) - _REQUIRED - _OPTIONAL)
    if unknown:
        raise _fail(path, f"{key}.{unknown[0]}", "unknown key")
    missing = sorted(_REQUIRED - set(raw))
    if missing:
        raise _fail(path, f"{key}.{missing[0]}", "missing field")
    if raw["action"] not in ACTIONS:
        raise _fail(path, f"{key}.action", f"{raw['action']!r} is not one of {', '.join(ACTIONS)}")
    if raw["severity"] not in SEVERITIES:
        raise _fail(path, f"{key}.severity", f"{raw['severity']!r} is not one of {', '.join(SEVERITIES)}")
    if (raw["action"] == "replace") != ("replacement" in raw):
        raise _fail(path, f"{key}.replacement", "required exactly when action is 'replace'")
    for field in ("import_names", "name_patterns", "repositories"):
        value = raw.get(field, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise _fail(path, f"{key}.{field}", "must be a list of names")
    releases_by_line = _releases(path, key, raw)
    lines = _lines(path, key, raw)
    return PackageEntry(
        name=name,
        action=raw["action"],
        import_names=tuple(raw["import_names"]),
        reason=raw["reason"],
        source=raw["source"],
        severity=raw["severity"],
        replacement=raw.get("replacement"),
        suggestion=raw.get("suggestion"),
        name_patterns=tuple(canonicalize_name(p) for p in raw.get("name_patterns", [])),
        imports_run=bool(raw.get("imports_run", False)),
        strip_local_version=bool(raw.get("strip_local_version", False)),
        vendor_build=bool(raw.get("vendor_build", False)),
        releases_by_line=tuple(releases_by_line.items()),
        releases_any_line=raw.get("releases"),
        releases_why=raw.get("releases_why"),
        releases_source=raw.get("releases_source"),
        lines=tuple((line, tuple(changes.items())) for line, changes in lines.items()),
        repositories=tuple(r.lower() for r in raw.get("repositories", [])),
    )


def _releases(path: Path, key: str, raw: dict) -> dict[str, str]:
    """The checked `releases_by_line`; `releases` checked too. Both are PEP 440 specifiers,
    and either needs `releases_why` and `releases_source` (every bound says where it is from)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    by_line = raw.get("releases_by_line", {})
    if not isinstance(by_line, dict):
        raise _fail(path, f"{key}.releases_by_line", "must be a table of line = specifier")
    specifiers = {f"{key}.releases_by_line.{line}": spec for line, spec in by_line.items()}
    if "releases" in raw:
        specifiers[f"{key}.releases"] = raw["releases"]
    for where, spec in specifiers.items():
        try:
            if not isinstance(spec, str) or not str(SpecifierSet(spec)):
                raise InvalidSpecifier(spec)
        except InvalidSpecifier:
            raise _fail(path, where, f"{spec!r} is not a PEP 440 version specifier") from None
    if specifiers:
        for field in ("releases_why", "releases_source"):
            if not isinstance(raw.get(field), str) or not raw[field].strip():
                raise _fail(path, f"{key}.{field}", "required with releases or releases_by_line")
    return dict(by_line)


def _lines(path: Path, key: str, raw: dict) -> dict[str, dict[str, str]]:
    lines = raw.get("lines", {})
    if not isinstance(lines, dict) or not all(isinstance(v, dict) for v in lines.values()):
        raise _fail(path, f"{key}.lines", "must be a table of line = {field = value}")
    for line, changes in lines.items():
        unknown = sorted(set(changes) - _LINE_FIELDS)
        if unknown:
            raise _fail(
                path, f"{key}.lines.{line}.{unknown[0]}", f"not a per-line field ({', '.join(sorted(_LINE_FIELDS))})"
            )
        merged = {**raw, **changes}
        if merged["action"] not in ACTIONS:
            raise _fail(path, f"{key}.lines.{line}.action", f"{merged['action']!r} is not one of {', '.join(ACTIONS)}")
        if merged["severity"] not in SEVERITIES:
            raise _fail(
                path, f"{key}.lines.{line}.severity", f"{merged['severity']!r} is not one of {', '.join(SEVERITIES)}"
            )
        if merged["action"] != "replace" and "replacement" in changes:
            raise _fail(path, f"{key}.lines.{line}.replacement", "only with action 'replace'")
        if merged["action"] == "replace" and not merged.get("replacement"):
            raise _fail(path, f"{key}.lines.{line}.replacement", "required when action is 'replace'")
    return lines


def parse_package_table(path: Path, target: str) -> PackageTable:
    """Read and validate one packages.toml; ValueError names the file and the bad key."""
    try:
        data = load_toml(path.read_bytes())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: invalid TOML: {exc}") from exc
    unknown = sorted(set(data) - _TOP_LEVEL)
    if unknown:
        raise _fail(path, unknown[0], "unknown key")
    if data.get("target", target) != target:
        raise _fail(path, "target", f"{data['target']!r}, expected {target!r}")
    entries: dict[str, PackageEntry] = {}
    imports: dict[str, PackageEntry] = {}
    for name, raw in data.get("packages", {}).items():
        entry = _entry(path, name, raw)
        entries[name] = entry
        for module in entry.import_names:
            if module in imports:
                raise _fail(
                    path, f"packages.{name}.import_names", f"{module!r} already listed by {imports[module].name}"
                )
            imports[module] = entry
    return PackageTable(target, path, MappingProxyType(entries), MappingProxyType(imports))


@lru_cache(maxsize=None)
def load_package_table(target: str, path: Path | None = None) -> PackageTable:
    """Load (cached) the package table of `target`; `path` overrides the shipped file."""
    if path is None:
        path = data_dir("op_tables") / target / "packages.toml"
        if not path.is_file():
            raise ValueError(f"no package table for target {target!r} ({path})")
    return parse_package_table(Path(path), target)
