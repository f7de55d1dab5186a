"""Baseline files: findings a team has accepted, so that only new ones fail the check.

An entry is path + rule + the hash of the finding's stripped line text + its occurrence
among identical ones (see `Checked.key`). Moving code up or down keeps an entry matching;
editing the line, or adding another identical finding to the file, does not. `line` and
`message` are there for the people reviewing the file; matching ignores them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from porter import __version__
from porter.checker.model import Checked

BASELINE_VERSION = 1


class BaselineError(ValueError):
    """The baseline file is missing, malformed, or for another target."""


def write_baseline(path: Path, target: str, version: str | None, findings: Sequence[Checked]) -> int:
    """Write every finding of a check for `target` (and torch line `version`) as accepted;
    returns how many."""
    entries = [
        {
            "path": c.finding.path,
            "rule": c.finding.rule,
            "line_hash": c.line_hash,
            "occurrence": c.occurrence,
            "line": c.finding.line,
            "message": c.finding.message,
        }
        for c in findings
    ]
    data = {
        "schema_version": BASELINE_VERSION,
        "tool": "porter",
        "porter_version": __version__,
        "target": target,
        "target_version": version,
        "findings": entries,
    }
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8", errors="backslashreplace")
    return len(entries)


def load_baseline(path: Path, target: str) -> frozenset[tuple[str, str, str, int]]:
    """The accepted keys of a baseline written for `target`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("schema_version") != BASELINE_VERSION or data.get("tool") != "porter":
        raise BaselineError(f"{path} is not a porter baseline (schema_version {BASELINE_VERSION})")
    if data.get("target") != target:
        raise BaselineError(f"{path} is a baseline for --target {data.get('target')}, not {target}")
    try:
        return frozenset((e["path"], e["rule"], e["line_hash"], int(e["occurrence"])) for e in data["findings"])
    except (KeyError, TypeError, ValueError) as exc:
        raise BaselineError(f"{path}: malformed entry ({exc})") from exc


def split_accepted(
    findings: tuple[Checked, ...], accepted: frozenset[tuple[str, str, str, int]]
) -> tuple[tuple[Checked, ...], int]:
    """The findings the baseline does not accept, and how many it accepted."""
    new = tuple(c for c in findings if c.key not in accepted)
    return new, len(findings) - len(new)
