"""Rules are data: TOML files under rules/<target>/, loaded and validated here.

Each `[[rule]]` table has the common fields below plus the fields its kind declares
(porter/kinds/*). Anything unknown, missing or duplicated is a `RuleError` naming the file
and the key, so a typo in a rule never silently disables it.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from porter.datafiles import data_dir, load_toml

TARGETS = ("mlu", "hip")
_CODE = re.compile(r"^PRT\d{3}$")
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_COMMON_REQUIRED = {
    "code": str,
    "name": str,
    "kind": str,
    "summary": str,
    "why": str,
    "severity": str,
    "applicability": str,
    "examples": list,
}
_COMMON_OPTIONAL = {"message": str, "suggestion": str, "versions": list, "fix": str}
_SEVERITIES = ("error", "warning", "info")
_APPLICABILITY = ("safe", "unsafe", "manual")


class RuleError(ValueError):
    """A rule file is malformed; the message names the file and the key."""


@dataclass(frozen=True)
class Example:
    before: str
    after: str | None = None


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    kind: str
    target: str
    summary: str
    why: str
    severity: str
    applicability: str
    examples: tuple[Example, ...]
    message: str | None = None
    suggestion: str | None = None
    # torch_mlu lines the rule is for (e.g. ["2.4"]); empty means every version.
    versions: tuple[str, ...] = ()
    # What the rule does when it fixes, in a sentence, for `porter rules CODE`.
    fix: str | None = None
    params: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    source: str = ""


@dataclass(frozen=True, eq=False)
class RuleSet:
    target: str
    rules: tuple[Rule, ...]
    digest: str  # hash of the rule files, part of the cache key

    # Identity is the target and the digest of the files: cheap to hash, and rule sets are
    # keys of several per-process caches (screens, rule lookups) on the hot path.
    def __hash__(self) -> int:
        return hash((self.target, self.digest))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RuleSet) and (self.target, self.digest) == (other.target, other.digest)

    def by_code(self, code: str) -> Rule | None:
        return next((r for r in self.rules if r.code == code), None)

    def of_kind(self, kind: str) -> list[Rule]:
        return [r for r in self.rules if r.kind == kind]


def _check_type(path: Path, where: str, key: str, value: Any, expected: type) -> None:
    if not isinstance(value, expected):
        raise RuleError(f"{path}: {where}: key '{key}' must be {expected.__name__}, got {type(value).__name__}")


def parse_rule(path: Path, index: int, table: dict[str, Any], target: str) -> Rule:
    """Validate one `[[rule]]` table against the common fields and its kind's fields."""
    import porter.files  # noqa: F401  (file-type kinds register their fields)
    import porter.opscan  # noqa: F401  (the op-table kind registers its fields)
    import porter.vendor_paths  # noqa: F401  (so does the vendor-path kind)
    from porter.kinds import KIND_FIELDS

    where = f"rule #{index + 1}" + (f" ({table['code']})" if isinstance(table.get("code"), str) else "")
    for key, typ in _COMMON_REQUIRED.items():
        if key not in table:
            raise RuleError(f"{path}: {where}: missing key '{key}'")
        _check_type(path, where, key, table[key], typ)
    kind = table["kind"]
    if kind not in KIND_FIELDS:
        raise RuleError(f"{path}: {where}: key 'kind' has unknown value '{kind}' (known: {', '.join(sorted(KIND_FIELDS))})")
    required, optional = KIND_FIELDS[kind]
    for key, value in table.items():
        if key in _COMMON_REQUIRED:
            continue
        expected = _COMMON_OPTIONAL.get(key) or required.get(key) or optional.get(key)
        if expected is None:
            raise RuleError(f"{path}: {where}: unknown key '{key}' for kind '{kind}'")
        _check_type(path, where, key, value, expected)
    for key in required:
        if key not in table:
            raise RuleError(f"{path}: {where}: missing key '{key}' required by kind '{kind}'")
    if not _CODE.match(table["code"]):
        raise RuleError(f"{path}: {where}: key 'code' must look like PRT123")
    if not _NAME.match(table["name"]):
        raise RuleError(f"{path}: {where}: key 'name' must be kebab-case")
    if table["severity"] not in _SEVERITIES:
        raise RuleError(f"{path}: {where}: key 'severity' must be one of {', '.join(_SEVERITIES)}")
    if table["applicability"] not in _APPLICABILITY:
        raise RuleError(f"{path}: {where}: key 'applicability' must be one of {', '.join(_APPLICABILITY)}")
    examples = []
    for ex in table["examples"]:
        if not isinstance(ex, dict) or "before" not in ex or set(ex) - {"before", "after"}:
            raise RuleError(f"{path}: {where}: key 'examples' entries need 'before' and optional 'after' only")
        examples.append(Example(ex["before"], ex.get("after")))
    if not examples:
        raise RuleError(f"{path}: {where}: key 'examples' needs at least one example")
    params = {k: v for k, v in table.items() if k in required or k in optional}
    return Rule(
        code=table["code"],
        name=table["name"],
        kind=kind,
        target=target,
        summary=table["summary"],
        why=table["why"],
        severity=table["severity"],
        applicability=table["applicability"],
        examples=tuple(examples),
        message=table.get("message"),
        suggestion=table.get("suggestion"),
        versions=tuple(table.get("versions", ())),
        fix=table.get("fix"),
        params=params,
        source=str(path),
    )


def load_rule_files(paths: list[Path], target: str) -> RuleSet:
    """Load and validate rule files; codes and names must be unique across them."""
    rules: list[Rule] = []
    seen_codes: dict[str, Path] = {}
    seen_names: dict[str, Path] = {}
    digest = hashlib.sha256()
    for path in sorted(paths):
        raw = path.read_bytes()
        digest.update(path.name.encode() + b"\0" + raw)
        try:
            data = load_toml(raw)
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise RuleError(f"{path}: not valid TOML: {exc}") from exc
        unknown = set(data) - {"rule"}
        if unknown:
            raise RuleError(f"{path}: unknown top-level key '{sorted(unknown)[0]}' (expected [[rule]] tables)")
        for i, table in enumerate(data.get("rule", [])):
            rule = parse_rule(path, i, table, target)
            if rule.code in seen_codes:
                raise RuleError(f"{path}: key 'code': duplicate code {rule.code} (also in {seen_codes[rule.code]})")
            if rule.name in seen_names:
                raise RuleError(f"{path}: key 'name': duplicate name {rule.name} (also in {seen_names[rule.name]})")
            seen_codes[rule.code] = path
            seen_names[rule.name] = path
            rules.append(rule)
    rules.sort(key=lambda r: r.code)
    return RuleSet(target, tuple(rules), digest.hexdigest()[:16])


@lru_cache(maxsize=None)
def load_rules(target: str) -> RuleSet:
    """The rules that ship with porter for `target`."""
    if target not in TARGETS:
        raise RuleError(f"unknown target '{target}' (known: {', '.join(TARGETS)})")
    folder = data_dir("rules") / target
    return load_rule_files(list(folder.glob("*.toml")), target)
