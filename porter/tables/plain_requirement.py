"""The common requirement strings, read without the packaging library.

Nearly every line a training repository pins is `name[extras] op version, op version` or
`name @ url`. Loading packaging.requirements costs 20-25 ms (it pulls its tag and marker
machinery), more than all of a repository's requirement files take to review, so those
strings are read here; anything else (markers, pre-release spellings, `===`, a version
packaging would normalise) returns None and the caller asks packaging. What this module
accepts is a strict subset of PEP 508, read exactly as packaging reads it:
tests/test_packages.py compares the two on thousands of strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
RELEASE = r"[0-9]+(?:\.[0-9]+)*"  # digits and dots: a release as pins.py compares it too
# A canonical public version: release, then optional pre (a/b/rc N), post (.postN), dev (.devN).
_SUFFIX = r"(?:(?:a|b|rc)[0-9]+)?(?:\.post[0-9]+)?(?:\.dev[0-9]+)?"
_PUBLIC = RELEASE + _SUFFIX
_LOCAL = r"\+[a-z0-9]+(?:\.[a-z0-9]+)*"
# Which operator takes which version: a local label or a `.*` only with == and !=; ~= wants
# at least two release numbers.
_CLAUSE = re.compile(
    rf"\s*(?:(?P<eq>==|!=)\s*(?P<v1>{_PUBLIC}(?:{_LOCAL})?|{RELEASE}\.\*)"
    rf"|(?P<cmp><=|>=|<|>)\s*(?P<v2>{_PUBLIC})"
    rf"|(?P<compat>~=)\s*(?P<v3>[0-9]+(?:\.[0-9]+)+{_SUFFIX}))\s*"
)
_REQUIREMENT = re.compile(rf"(?P<name>{_NAME})\s*(?:\[(?P<extras>[^\]]*)\])?\s*(?P<rest>.*)", re.DOTALL)
_EXTRA = re.compile(rf"\s*({_NAME})\s*")
_URL = re.compile(r"@\s*(?P<url>[a-z][a-z0-9+.-]*://[^\s;#]+)\s*")


@dataclass(frozen=True)
class PlainSpecifier:
    operator: str
    version: str

    def __str__(self) -> str:
        return f"{self.operator}{self.version}"


@dataclass(frozen=True)
class PlainRequirement:
    """What RequirementPolicy reads of a requirement, as packaging's Requirement has it."""

    name: str
    extras: frozenset[str]
    specifier: tuple[PlainSpecifier, ...]
    url: str | None


def parse_plain(text: str) -> PlainRequirement | None:
    """The requirement `text` states, or None when it is not one of the plain forms."""
    match = _REQUIREMENT.fullmatch(text.strip())
    if match is None:
        return None
    extras: set[str] = set()
    if match["extras"] is not None and match["extras"].strip():
        for part in match["extras"].split(","):
            extra = _EXTRA.fullmatch(part)
            if extra is None:
                return None
            extras.add(extra[1])
    rest = match["rest"]
    if not rest:
        return PlainRequirement(match["name"], frozenset(extras), (), None)
    if rest.startswith("@"):
        url = _URL.fullmatch(rest)
        return None if url is None else PlainRequirement(match["name"], frozenset(extras), (), url["url"])
    specifiers = []
    for clause in rest.split(","):
        found = _CLAUSE.fullmatch(clause)
        if found is None:
            return None
        operator = found["eq"] or found["cmp"] or found["compat"]
        specifiers.append(PlainSpecifier(operator, found["v1"] or found["v2"] or found["v3"]))
    return PlainRequirement(match["name"], frozenset(extras), tuple(specifiers), None)


_SEPARATORS = re.compile(r"[-_.]+")


def canonical_name(name: str) -> str:
    """PEP 503 normalisation, as packaging.utils.canonicalize_name does it."""
    return _SEPARATORS.sub("-", name).lower()


_IDENTIFIERS = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"  # an interpreter tag set: py2.py3
_COMPONENTS = r"[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*"  # an ABI or platform tag set
_WHEEL = re.compile(
    rf"(?P<name>[A-Za-z0-9_.]+)-(?P<version>{_PUBLIC})(?P<local>\+[A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*)?"
    r"(?:-[0-9][A-Za-z0-9_.]*)?"
    rf"-{_IDENTIFIERS}-{_COMPONENTS}-{_COMPONENTS}\.whl"
)


def plain_wheel(filename: str) -> tuple[str, str] | None:
    """(canonical distribution name, version) of a wheel file name in the common form, as
    packaging's parse_wheel_filename gives them; None for any other (packaging decides)."""
    match = _WHEEL.fullmatch(filename)
    if (
        match is None
        or "__" in match["name"]
        or match["name"].startswith(("_", "."))
        or match["name"].endswith(("_", "."))
    ):
        return None
    # A version's local label reads in lower case (`+cu12torch2.6cxx11abiFALSE` is `...abifalse`).
    return canonical_name(match["name"]), match["version"] + (match["local"] or "").lower()
