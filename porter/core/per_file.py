"""Findings that are one thing to act on per file: those of a rule marked `once_per_file`
(torchvision and torchaudio, wherever a file installs them) become one finding, at the first
place, that says where the others are and takes the highest severity among them."""

from __future__ import annotations

from dataclasses import replace

from porter.core.model import Finding

_RANK = {"info": 0, "warning": 1, "error": 2}


def once_per_file(findings: list[Finding], codes: frozenset[str]) -> list[Finding]:
    """`findings` with those of `codes` (reports without an edit) merged into one per code."""
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        if f.rule in codes and f.edit is None:
            groups.setdefault(f.rule, []).append(f)
    merged = {code: _merged(group) for code, group in groups.items() if len(group) > 1}
    if not merged:
        return findings
    out = [f for f in findings if f.rule not in merged or f.edit is not None]
    return out + list(merged.values())


def _merged(group: list[Finding]) -> Finding:
    first, *rest = sorted(group, key=lambda f: (f.line, f.col))
    places = ", ".join(f"{f.subject or f.rule} (line {f.line})" for f in rest)
    severity = max((f.severity for f in group), key=_RANK.__getitem__)
    message = first.message if first.message.endswith(".") else f"{first.message}."
    return replace(first, severity=severity, message=f"{message} Also in this file: {places}.")
