"""setup.cfg: `[options] install_requires` and every key of `[options.extras_require]`.

setuptools reads a multi-line value one requirement per line (comment lines skipped) and
a one-line value as `;`-separated requirements. Each requirement goes through the shared
requirement policy. A dropped requirement on a continuation line of its own is commented
out there (configparser and setuptools both skip indented `#` lines); on the key's own
line it is reported, since commenting that line out would remove the key.
"""

from __future__ import annotations

import re

from porter.core.edits import Found
from porter.core.model import Finding, Skipped
from porter.filetypes.requirements import BrokenFile, PackagingView, packaging_found
from porter.rules import ActiveRules, Rule
from porter.rules.kinds import REQUIREMENT_STRING, Matcher
from porter.tables.requirement_policy import RequirementPolicy, requirement_findings
from porter.core.textio import LineIndex

_SECTION = re.compile(r"\[([^\]]+)\]\s*(?:[#;].*)?$")
_KEY = re.compile(r"([^\s=:#;][^=:]*?)\s*[=:]\s*")


def _wanted(section: str, key: str) -> bool:
    return (section == "options" and key == "install_requires") or section == "options.extras_require"


def setup_cfg_findings(view: PackagingView, rules: list[Rule]) -> list[Finding]:
    """Findings for the requirement values of one setup.cfg."""
    policy, path, text = view.policy, view.path, view.text
    index = LineIndex(text)
    findings: list[Finding] = []
    section = ""
    in_value = False  # inside the continuation lines of a wanted key
    for number in range(1, len(index.starts) + 1):
        line = index.line_text(number)
        start = index.starts[number - 1]
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if line[0] in " \t":
            if in_value:
                findings += requirement_findings(
                    policy, path, index, start + line.index(stripped[0]), start + len(line.rstrip()), (number, number)
                )
            continue
        section_match = _SECTION.match(line)
        if section_match:
            section, in_value = section_match.group(1).strip(), False
            continue
        key = _KEY.match(line)
        if key is None:
            raise BrokenFile(f"line {number} is neither a section, a key nor a continuation")
        in_value = _wanted(section, key.group(1).strip())
        if in_value:
            following = index.line_text(number + 1) if number < len(index.starts) else ""
            multi_line = following[:1] in (" ", "\t") and bool(following.strip())
            findings += _same_line(policy, path, index, start + key.end(), line[key.end() :], multi_line)
    return findings


def _same_line(
    policy: RequirementPolicy, path: str, index: LineIndex, at: int, value: str, multi_line: bool
) -> list[Finding]:
    """Requirements on the key's own line: one, or `;`-separated when the value is one line."""
    if value.strip().startswith("file:"):
        return []  # the named file is a requirements file of its own
    findings: list[Finding] = []
    offset = 0
    for part in [value] if multi_line else value.split(";"):
        if part.strip():
            lead = len(part) - len(part.lstrip())
            start, end = at + offset + lead, at + offset + len(part.rstrip())
            findings += requirement_findings(policy, path, index, start, end, None)
        offset += len(part) + 1
    return findings


# The kinds a setup.cfg is matched with (porter/rules/kinds.py's Matcher), in the order their
# findings are listed: adding a kind is its matcher and a line.
SETUP_CFG_KINDS: tuple[Matcher[PackagingView], ...] = (Matcher(REQUIREMENT_STRING, setup_cfg_findings),)


def find_setup_cfg(path: str, data: bytes, rules: ActiveRules) -> Found | Skipped | None:
    """Findings (with edits) for one setup.cfg (never raises for bad input)."""
    return packaging_found(path, data, rules, "setup-cfg", SETUP_CFG_KINDS)
