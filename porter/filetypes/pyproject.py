"""pyproject.toml: the PEP 508 strings of `[project] dependencies`, `optional-dependencies`
and `[dependency-groups]`, edited in place.

tomllib says what the dependencies are; a small scanner of porter's own finds where each
string literal sits, and the two must agree before anything is edited. Edits stay inside
the string literals (rename, +cuXXX removal); a dropped dependency is commented out only
when its string is alone on its line, and reported otherwise. Other tables (`[tool.*]`,
`[build-system]`) are never touched.
"""

from __future__ import annotations

import re

from porter.core.edits import Found
from porter.core.model import Finding, Skipped
from porter.filetypes.requirements import BrokenFile, PackagingView, packaging_found
from porter.rules import ActiveRules, Rule
from porter.rules.kinds import REQUIREMENT_STRING, Matcher
from porter.tables.requirement_policy import RequirementPolicy, alone_on_lines, requirement_findings
from porter.core.textio import LineIndex
from porter.core.toml import tomllib

_HEADER = re.compile(r"[ \t]*(\[\[?)[ \t]*([^\]#\n]+?)[ \t]*\]\]?[ \t]*(?:#.*)?$")
_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')"""
_KEY = re.compile(rf"[ \t]*({_KEY_PART}(?:[ \t]*\.[ \t]*{_KEY_PART})*)[ \t]*=")
_STRING = re.compile(r"\"\"\"|'''|\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'")
_SKIP = re.compile(r"[ \t\r\n,]+|#[^\n]*")


def _key_path(raw: str) -> tuple[str, ...]:
    parts = re.findall(r"\"[^\"]*\"|'[^']*'|[^.\s]+", raw)
    return tuple(p[1:-1] if p.startswith(('"', "'")) else p for p in parts)


def dependency_strings(text: str) -> list[tuple[tuple[str, ...], int, int, str]]:
    """(key path, start, end, raw body) of each one-line string in a dependency array.

    Only top-level `key = [ ... ]` arrays are read (with `[project]`, `[project.optional-
    dependencies]` and `[dependency-groups]` headers, or dotted keys under `[project]`);
    a dependency list written any other way is simply not found, and the cross-check with
    tomllib then refuses to edit.
    """
    found: list[tuple[tuple[str, ...], int, int, str]] = []
    table: tuple[str, ...] = ()
    pos = 0
    index = LineIndex(text)
    for number, start in enumerate(index.starts, 1):
        if start < pos:
            continue  # inside an array read below
        line = index.line_text(number)
        header = _HEADER.match(line)
        if header:
            table = _key_path(header.group(2)) if header.group(1) == "[" else ("<array-table>",)
            continue
        key = _KEY.match(line)
        if key is None:
            continue
        path = table + _key_path(key.group(1))
        value_at = start + key.end()
        rest = text[value_at:]
        if not rest.lstrip(" \t").startswith("[") or not _is_dependency_path(path):
            continue
        pos = _read_array(text, value_at + rest.index("["), path, found)
    return found


def _is_dependency_path(path: tuple[str, ...]) -> bool:
    return (
        path == ("project", "dependencies")
        or (len(path) == 3 and path[:2] == ("project", "optional-dependencies"))
        or (len(path) == 2 and path[0] == "dependency-groups")
    )


def _read_array(text: str, at: int, path: tuple[str, ...], found: list) -> int:
    """Record the strings of the array opening at text[at]; return the offset after it."""
    pos = at + 1
    while pos < len(text):
        skip = _SKIP.match(text, pos)
        if skip:
            pos = skip.end()
            continue
        if text[pos] == "]":
            return pos + 1
        if text[pos] == "{":  # {include-group = "..."} in [dependency-groups]: not a requirement
            close = text.find("}", pos)
            pos = close + 1 if close > 0 else len(text)
            continue
        string = _STRING.match(text, pos)
        if string is None or string.group(0) in ('"""', "'''"):
            line = text.count("\n", 0, pos) + 1
            raise BrokenFile(f"pyproject.toml: {'.'.join(path)} holds something porter does not edit (line {line})")
        found.append((path, string.start() + 1, string.end() - 1, string.group(0)[1:-1]))
        pos = string.end()
    raise BrokenFile(f"pyproject.toml: {'.'.join(path)} is not closed")


def _expected(data: dict) -> list[tuple[tuple[str, ...], str]]:
    project = data.get("project", {})
    out = [(("project", "dependencies"), d) for d in project.get("dependencies", [])]
    for extra, deps in project.get("optional-dependencies", {}).items():
        out += [(("project", "optional-dependencies", extra), d) for d in deps]
    for group, deps in data.get("dependency-groups", {}).items():
        out += [(("dependency-groups", group), d) for d in deps if isinstance(d, str)]
    return out


def pyproject_findings(view: PackagingView, rules: list[Rule]) -> list[Finding]:
    """The dependency strings of one pyproject.toml, edited in place where the scanner agrees with tomllib."""
    policy, path, text = view.policy, view.path, view.text
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BrokenFile(f"invalid TOML ({exc})") from exc
    expected = _expected(data)
    if not expected:
        return []
    try:
        strings = dependency_strings(text)
    except BrokenFile:
        strings = []
    index = LineIndex(text)
    if [(p, raw) for p, _, _, raw in strings] != expected or any("\\" in raw for *_, raw in strings):
        # The scanner and tomllib disagree (escapes, inline tables, ...): report, never edit.
        return [f for p, d in expected for f in _unlocated(policy, path, index, d)]
    findings: list[Finding] = []
    for _, start, end, _ in strings:
        findings += requirement_findings(policy, path, index, start, end, alone_on_lines(index, start - 1, end + 1))
    return findings


def _unlocated(policy: RequirementPolicy, path: str, index: LineIndex, requirement: str) -> list[Finding]:
    where = index.text.find(requirement)
    start = max(where, 0)
    return requirement_findings(policy, path, index, start, start, None, policy.review(requirement, editable=False))


def _verify(text: str) -> None:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BrokenFile(f"invalid TOML ({exc})") from exc


# The kinds a pyproject.toml is matched with (porter/rules/kinds.py's Matcher), in the order
# their findings are listed: adding a kind is its matcher and a line.
PYPROJECT_KINDS: tuple[Matcher[PackagingView], ...] = (Matcher(REQUIREMENT_STRING, pyproject_findings),)


def find_pyproject(path: str, data: bytes, rules: ActiveRules) -> Found | Skipped | None:
    """Findings (with edits) for one pyproject.toml (never raises for bad input)."""
    return packaging_found(path, data, rules, "pyproject", PYPROJECT_KINDS, _verify)
