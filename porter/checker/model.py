"""What `porter check` counts: findings with stable fingerprints, and totals over them.

A fingerprint is the hash of path, rule, the finding's line text (stripped) and its
occurrence among findings with the same three: it survives lines moving up or down,
which is what baselines and SARIF's partialFingerprints need.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from porter.core.model import REWRITE_PREFIX, SEVERITIES, FileCheck, Finding


@dataclass(frozen=True)
class Checked:
    """A finding as check reports it: with its line hash and occurrence index."""

    finding: Finding
    line_hash: str
    occurrence: int

    @property
    def key(self) -> tuple[str, str, str, int]:
        return self.finding.path, self.finding.rule, self.line_hash, self.occurrence

    @property
    def rewrite(self) -> bool:
        """Whether `convert` rewrites this (it is then an edit in convert's report, not a finding)."""
        return self.finding.message.startswith(REWRITE_PREFIX)

    @property
    def fingerprint(self) -> str:
        raw = "\0".join(map(str, self.key))
        return hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()[:32]  # names that are not UTF-8 too


def numbered(files: Sequence[FileCheck]) -> tuple[Checked, ...]:
    """Every finding of the files (in path order), by line, column and rule within a file,
    each with its occurrence among those with the same path, rule and line text."""
    seen: Counter[tuple[str, str, str]] = Counter()
    out: list[Checked] = []
    for file in files:
        pairs = sorted(zip(file.findings, file.line_hashes), key=lambda p: (p[0].line, p[0].col, p[0].rule))
        for finding, digest in pairs:
            key = (finding.path, finding.rule, digest)
            out.append(Checked(finding, digest, seen[key]))
            seen[key] += 1
    return tuple(out)


def api_statuses(files: Sequence[FileCheck]) -> dict[str, str]:
    """Every API the files use -> its status in the target's table."""
    return {api: status for file in files for api, status in file.apis}


def api_counts(files: Sequence[FileCheck]) -> dict[str, int]:
    """How many distinct APIs the files use, per status."""
    from porter.rules.kinds import API_STATUSES  # the op tables' statuses, without loading the tables

    counts = Counter(api_statuses(files).values())
    return {status: counts.get(status, 0) for status in API_STATUSES}


def severity_counts(findings: Sequence[Checked], rewrites: bool | None = None) -> dict[str, int]:
    """Findings per severity: all of them, or (rewrites=False) those `convert` leaves for a
    person, as its report counts them, or (rewrites=True) those it rewrites."""
    counts = Counter(c.finding.severity for c in findings if rewrites is None or c.rewrite == rewrites)
    return {s: counts.get(s, 0) for s in SEVERITIES}
