"""What `porter check` produces: per-file results, findings with stable fingerprints, totals.

A fingerprint is the hash of path, rule, the finding's line text (stripped) and its
occurrence among findings with the same three: it survives lines moving up or down,
which is what baselines and SARIF's partialFingerprints need.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from porter.model import SEVERITIES, Finding
from porter.optables import STATUSES


def line_hash(line_text: str) -> str:
    """Hash of a line's text without surrounding whitespace (indentation changes are moves)."""
    return hashlib.sha256(line_text.strip().encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class FileCheck:
    """One file's findings (with the hash of each finding's line) and the APIs it uses."""

    path: str
    kind: str = "other"
    findings: tuple[Finding, ...] = ()
    line_hashes: tuple[str, ...] = ()
    apis: tuple[tuple[str, str], ...] = ()  # (api, status), distinct
    suppressed: int = 0
    skipped: str | None = None  # why the file could not be read as its kind
    error: str | None = None  # a porter bug: the check of this file is incomplete


def encode_file_check(r: FileCheck) -> dict:
    """FileCheck as plain data, for the result cache."""
    from porter.cache import encode_finding

    return {"path": r.path, "kind": r.kind, "findings": [encode_finding(f) for f in r.findings],
            "line_hashes": list(r.line_hashes), "apis": [list(a) for a in r.apis],
            "suppressed": r.suppressed, "skipped": r.skipped, "error": r.error}


def decode_file_check(d: dict) -> FileCheck:
    from porter.cache import decode_finding

    return FileCheck(d["path"], d["kind"], tuple(decode_finding(f) for f in d["findings"]), tuple(d["line_hashes"]),
                     tuple((a, s) for a, s in d["apis"]), d["suppressed"], d["skipped"], d["error"])


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
    def fingerprint(self) -> str:
        raw = "\0".join(map(str, self.key))
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class CheckResult:
    """The whole tree: files in path order and their findings, numbered for fingerprints."""

    src: Path
    target: str
    version: str | None
    files: tuple[FileCheck, ...]
    findings: tuple[Checked, ...] = field(init=False)

    def __post_init__(self) -> None:
        seen: Counter[tuple[str, str, str]] = Counter()
        out: list[Checked] = []
        for file in self.files:
            pairs = sorted(zip(file.findings, file.line_hashes), key=lambda p: (p[0].line, p[0].col, p[0].rule))
            for finding, digest in pairs:
                key = (finding.path, finding.rule, digest)
                out.append(Checked(finding, digest, seen[key]))
                seen[key] += 1
        object.__setattr__(self, "findings", tuple(out))

    def api_statuses(self) -> dict[str, str]:
        """Every API the tree uses -> its status in the target's table."""
        return {api: status for file in self.files for api, status in file.apis}

    def api_counts(self) -> dict[str, int]:
        """How many distinct APIs the tree uses, per status."""
        counts = Counter(self.api_statuses().values())
        return {status: counts.get(status, 0) for status in STATUSES}


def severity_counts(findings: list[Checked] | tuple[Checked, ...]) -> dict[str, int]:
    counts = Counter(c.finding.severity for c in findings)
    return {s: counts.get(s, 0) for s in SEVERITIES}
