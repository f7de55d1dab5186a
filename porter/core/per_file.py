"""Findings that are one thing to act on per file, merged into one at the first place:
those of a rule marked `once_per_file` (torchvision and torchaudio, wherever a file installs
them; a launch script's block of NCCL tuning variables), and the repeats of one reported name
(ten `NCCL_DEBUG` lookups in one test file; a rule's `once_per_subject`). A rule with both
merges the repeats first, then the names."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import replace

from porter.core.model import SEVERITIES, Finding


def merged_repeats(
    findings: list[Finding],
    key: Callable[[Finding], Hashable | None],
    describe: Callable[[Finding, list[Finding]], str],
    lead: Callable[[Finding], tuple] = lambda f: (f.line, f.col),
) -> list[Finding]:
    """`findings` with the reports (findings without an edit) that share a `key` (None: on its
    own) merged into the first by `lead` (by position unless told): its message becomes
    `describe(first, rest)` and its severity the highest of the group. The others keep their
    order; merged ones come last."""
    groups: dict[Hashable, list[Finding]] = {}
    for f in findings:
        k = key(f) if f.edit is None else None
        if k is not None:
            groups.setdefault(k, []).append(f)
    merged = {k: group for k, group in groups.items() if len(group) > 1}
    if not merged:
        return findings
    out = [f for f in findings if f.edit is not None or key(f) not in merged]
    for group in merged.values():
        first, *rest = sorted(group, key=lead)
        severity = min((f.severity for f in group), key=SEVERITIES.index)
        out.append(replace(first, severity=severity, message=describe(first, rest)))
    return out


def once_per_file(findings: list[Finding], codes: frozenset[str]) -> list[Finding]:
    """`findings` with those of `codes` (reports without an edit) merged into one per code and
    severity: a note (nothing to act on) is never folded into a finding, nor the reverse."""
    return merged_repeats(findings, lambda f: (f.rule, f.severity) if f.rule in codes else None, _also_in_this_file)


def _also_in_this_file(first: Finding, rest: list[Finding]) -> str:
    places = ", ".join(f"{f.subject or f.rule} (line {f.line})" for f in rest)
    message = first.message if first.message.endswith(".") else f"{first.message}."
    return f"{message} Also in this file: {places}."


def once_per_line(findings: list[Finding], codes: frozenset[str]) -> list[Finding]:
    """`findings` with those of `codes` on one line merged into one per code and severity: one
    `pip install torch==2.8.0 torchvision==0.23.0 torchaudio==2.8.0` is one decision (the
    target line's torch family), not three."""
    return merged_repeats(
        findings, lambda f: (f.rule, f.severity, f.line) if f.rule in codes else None, _also_on_this_line
    )


def _also_on_this_line(first: Finding, rest: list[Finding]) -> str:
    others = "; ".join(f"{f.subject or f.rule}: {f.suggestion or f.message}" for f in rest)
    message = first.message if first.message.endswith(".") else f"{first.message}."
    return f"{message} Also on this line: {others}"


def once_per_subject(findings: list[Finding], codes: frozenset[str] | None = None) -> list[Finding]:
    """`findings` with the reports of one rule about one subject (a variable's name) merged
    into the first, with the count; only those of `codes`, or of every rule when None."""
    return merged_repeats(
        findings, lambda f: (f.rule, f.subject or "") if codes is None or f.rule in codes else None, _more_mentions
    )


def _more_mentions(first: Finding, rest: list[Finding]) -> str:
    return f"{first.message} ({len(rest)} more mention{'s' if len(rest) > 1 else ''} in this file)"
