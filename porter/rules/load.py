"""Rules are data: TOML files under rules/<target>/, loaded and validated here.

Each `[[rule]]` table has the common fields below plus the fields its kind declares
(porter/rules/kinds.py). Anything unknown, missing, duplicated or outside a field's known
values is a `RuleError` naming the file and the key, so a typo in a rule never silently
disables it.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from porter.core.datafiles import data_dir, load_toml
from porter.core.toml import tomllib
from porter.rules.kinds import KINDS
from porter.rules.params import Field
from porter.rules.model import Example, Rule, RuleSet
from porter.rules.terms import APPLICABILITY, SEVERITIES, TARGETS, RuleError

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
_COMMON_OPTIONAL = {"message": str, "suggestion": str, "versions": list, "fix": str, "api_sources": dict}


def _check_type(path: Path, where: str, key: str, value: Any, expected: type) -> None:
    if not isinstance(value, expected):
        raise RuleError(f"{path}: {where}: key '{key}' must be {expected.__name__}, got {type(value).__name__}")


def _check_choices(path: Path, where: str, key: str, value: Any, spec: Field) -> None:
    """Values outside a field's known choices (a misspelt status, config type, action)."""

    def fail(bad: list, known: tuple[str, ...], what: str = "value") -> None:
        if bad:
            raise RuleError(
                f"{path}: {where}: key '{key}' has unknown {what}(s) {', '.join(map(repr, bad))} "
                f"(known: {', '.join(known)})"
            )

    if isinstance(value, dict):
        if spec.keys_in:
            fail([k for k in value if k not in spec.keys_in], spec.keys_in, "key")
        items = list(value.values())
    else:
        items = value if isinstance(value, list) else [value]
    if spec.choices:
        fail([v for v in items if v not in spec.choices], spec.choices)
    if spec.regex:
        _check_regexes(path, where, key, items)


def _check_regexes(path: Path, where: str, key: str, items: list) -> None:
    """Each item a regular expression that compiles: a bad one is an error naming the rule and
    what `re` says, when the rules load, not a crash in the middle of a run."""
    for item in items:
        if not isinstance(item, str):
            raise RuleError(f"{path}: {where}: key '{key}' must hold strings (regular expressions), got {item!r}")
        try:
            re.compile(item)
        except re.error as exc:
            raise RuleError(
                f"{path}: {where}: key '{key}': {item!r} is not a valid regular expression: {exc}"
            ) from None


def parse_rule(path: Path, index: int, table: dict[str, Any], target: str) -> Rule:
    """Validate one `[[rule]]` table against the common fields and its kind's schema."""
    where = f"rule #{index + 1}" + (f" ({table['code']})" if isinstance(table.get("code"), str) else "")
    for key, typ in _COMMON_REQUIRED.items():
        if key not in table:
            raise RuleError(f"{path}: {where}: missing key '{key}'")
        _check_type(path, where, key, table[key], typ)
    kind = table["kind"]
    schema = KINDS.get(kind)
    if schema is None:
        raise RuleError(f"{path}: {where}: key 'kind' has unknown value '{kind}' (known: {', '.join(sorted(KINDS))})")
    if not schema.in_toml:
        raise RuleError(
            f"{path}: {where}: key 'kind': '{kind}' rules are declared by a codemod file "
            "(`codemods` in [tool.porter]), not in TOML"
        )
    for key, value in table.items():
        if key in _COMMON_REQUIRED:
            continue
        if key in _COMMON_OPTIONAL:
            _check_type(path, where, key, value, _COMMON_OPTIONAL[key])
            continue
        spec = schema.field(key)
        if spec is None:
            raise RuleError(f"{path}: {where}: unknown key '{key}' for kind '{kind}'")
        _check_type(path, where, key, value, spec.type)
        _check_choices(path, where, key, value, spec)
    for key in schema.required:
        if key not in table:
            raise RuleError(f"{path}: {where}: missing key '{key}' required by kind '{kind}'")
    if not _CODE.match(table["code"]):
        raise RuleError(f"{path}: {where}: key 'code' must look like PRT123")
    if not _NAME.match(table["name"]):
        raise RuleError(f"{path}: {where}: key 'name' must be kebab-case")
    if table["severity"] not in SEVERITIES:
        raise RuleError(f"{path}: {where}: key 'severity' must be one of {', '.join(SEVERITIES)}")
    if table["applicability"] not in APPLICABILITY:
        raise RuleError(f"{path}: {where}: key 'applicability' must be one of {', '.join(APPLICABILITY)}")
    examples = [_example(path, where, ex) for ex in table["examples"]]
    if not examples:
        raise RuleError(f"{path}: {where}: key 'examples' needs at least one example")
    params = schema.params.from_table({k: v for k, v in table.items() if schema.field(k) is not None})
    return Rule(
        code=table["code"],
        name=table["name"],
        kind=kind,
        target=target,
        summary=table["summary"],
        why=table["why"],
        severity=table["severity"],  # one of SEVERITIES: checked above
        applicability=table["applicability"],
        examples=tuple(examples),
        message=table.get("message"),
        suggestion=table.get("suggestion"),
        versions=tuple(table.get("versions", ())),
        fix=table.get("fix"),
        api_sources=dict(table.get("api_sources", {})),
        params=params,
        source=str(path),
    )


_EXAMPLE_KEYS = {"before": str, "after": str, "setup": str, "file": str, "also": list}


def _example(path: Path, where: str, ex: object) -> Example:
    if not isinstance(ex, dict) or "before" not in ex:
        raise RuleError(f"{path}: {where}: key 'examples' entries are tables with a 'before'")
    for key, value in ex.items():
        if key not in _EXAMPLE_KEYS:
            raise RuleError(f"{path}: {where}: unknown key '{key}' in an example (known: {', '.join(_EXAMPLE_KEYS)})")
        if not isinstance(value, _EXAMPLE_KEYS[key]):
            raise RuleError(f"{path}: {where}: example key '{key}' must be a {_EXAMPLE_KEYS[key].__name__}")
    return Example(ex["before"], ex.get("after"), ex.get("setup", ""), ex.get("file"), tuple(ex.get("also", ())))


def _check_references(rules: list[Rule]) -> None:
    """A field that names another rule (`from_rule`) must name one of the right kind; an
    example's `also` must name rules of the set."""
    by_code = {r.code: r for r in rules}
    for rule in rules:
        for ex in rule.examples:
            for code in ex.also:
                if code not in by_code:
                    raise RuleError(f"{rule.source}: rule {rule.code}: example 'also' names unknown rule {code}")
        for key, value, wanted in rule.params.references():
            if value not in by_code or by_code[value].kind != wanted:
                raise RuleError(
                    f"{rule.source}: {rule.code}: key '{key}' must name a rule of kind '{wanted}', got {value!r}"
                )


def load_rule_files(paths: list[Path], target: str, project: bool = False) -> RuleSet:
    """Load and validate rule files; codes and names must be unique across them.

    `project`: a repository's own rule files (`rules` in [tool.porter]), which may also say
    at the top which targets they are for (`targets = ["mlu"]`; default: every target); a
    file for other targets adds no rule."""
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
        unknown = set(data) - ({"rule", "targets"} if project else {"rule"})
        if unknown:
            raise RuleError(f"{path}: unknown top-level key '{sorted(unknown)[0]}' (expected [[rule]] tables)")
        targets = data.get("targets", list(TARGETS))
        if not isinstance(targets, list) or not targets or any(t not in TARGETS for t in targets):
            raise RuleError(f"{path}: key 'targets' must be a list of {', '.join(TARGETS)}, got {targets!r}")
        if target not in targets:
            continue
        if not isinstance(data.get("rule", []), list):
            raise RuleError(f"{path}: key 'rule' must be [[rule]] tables")
        for i, table in enumerate(data.get("rule", [])):
            if not isinstance(table, dict):
                raise RuleError(f"{path}: rule #{i + 1} must be a table")
            rule = parse_rule(path, i, table, target)
            if rule.code in seen_codes:
                raise RuleError(f"{path}: key 'code': duplicate code {rule.code} (also in {seen_codes[rule.code]})")
            if rule.name in seen_names:
                raise RuleError(f"{path}: key 'name': duplicate name {rule.name} (also in {seen_names[rule.name]})")
            seen_codes[rule.code] = path
            seen_names[rule.name] = path
            rules.append(rule)
    _check_references(rules)
    rules.sort(key=lambda r: r.code)
    return RuleSet(target, tuple(rules), digest.hexdigest()[:16])


@lru_cache(maxsize=None)
def known_codes() -> frozenset[str]:
    """Every code a rule of porter has, for any target (a suppression or an option may name a
    code of the other target: a repository can be checked for both)."""
    return frozenset(r.code for t in TARGETS for r in load_rules(t).rules)


@lru_cache(maxsize=None)
def load_rules(target: str, project: tuple[Path, ...] = ()) -> RuleSet:
    """The rules that ship with porter for `target`, and a repository's own rule files
    (`project`, validated as porter's; a code or name porter has is an error naming the file)."""
    if target not in TARGETS:
        raise RuleError(f"unknown target '{target}' (known: {', '.join(TARGETS)})")
    if project:
        return _with_project(load_rules(target), tuple(project))
    folder = data_dir("rules") / target
    return load_rule_files(list(folder.glob("*.toml")), target)


def _with_project(base: RuleSet, project: tuple[Path, ...]) -> RuleSet:
    """porter's rules and the project's: TOML rule files, and codemod files (`.py`)."""
    toml_files = [p for p in project if p.suffix != ".py"]
    own = load_rule_files(toml_files, base.target, project=True)
    porter_codes = known_codes()
    names = {r.name for r in base.rules}
    for rule in own.rules:
        if rule.code in porter_codes:
            raise RuleError(
                f"{rule.source}: key 'code': {rule.code} is a code of porter's own rules "
                "(give project rules their own codes, e.g. in the unused PRT8xx band)"
            )
        if rule.name in names:
            raise RuleError(f"{rule.source}: key 'name': {rule.name} is the name of one of porter's rules")
    codemod_files = tuple(p for p in project if p.suffix == ".py")
    codemods: list[Rule] = []
    problems: tuple[tuple[str, str], ...] = ()
    digest = f"{base.digest}+{own.digest}"
    if codemod_files:
        from porter.rules.codemods import load_codemods

        taken = {code: "a rule of porter's" for code in porter_codes} | {r.code: r.source for r in own.rules}
        codemods, found_problems, codemod_digest = load_codemods(
            codemod_files, base.target, taken, frozenset(names | {r.name for r in own.rules})
        )
        problems = tuple(found_problems)
        digest += f"+{codemod_digest}"
    rules = tuple(sorted(base.rules + own.rules + tuple(codemods), key=lambda r: r.code))
    merged = RuleSet(base.target, rules, digest, problems)
    _check_references(list(rules))
    return merged
