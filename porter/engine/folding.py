"""Findings folded across files: one decision, one finding.

A folder of kernel modules porter keeps whole (`vendored/triton/*.py`, each importing Triton
at its top level) is one thing for the user to decide on, the feature that uses it, not
seven: the first module's finding names the others, and theirs are dropped. A finding takes
part when its `subject` starts with `KEPT_MODULE` (porter/python/kinds/device_guard.py).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import TypeVar

from porter.core.model import KEPT_MODULE, FileCheck, FileResult

R = TypeVar("R", FileResult, FileCheck)


def fold_kept_modules(results: list[R]) -> list[R]:
    """`results` (in path order) with the kept-module findings of each folder folded into
    its first module's; a file's other findings are untouched."""
    groups: dict[tuple[str, str, str], list[tuple[int, int]]] = defaultdict(list)
    for i, result in enumerate(results):
        for j, finding in enumerate(result.findings):
            if finding.subject and finding.subject.startswith(KEPT_MODULE):
                groups[(result.path.rpartition("/")[0], finding.rule, finding.subject)].append((i, j))
    dropped: dict[int, set[int]] = defaultdict(set)
    out = list(results)
    for (folder, _, _), places in groups.items():
        if len(places) < 2:
            continue
        (i, j), rest = places[0], places[1:]
        names = ", ".join(results[k].path.rpartition("/")[2] for k, _ in rest)
        first = results[i].findings[j]
        message = (f"{first.message} (and so are the {len(rest)} other modules of {folder or 'the top folder'} "
                   f"that import it: {names})")
        findings = list(out[i].findings)
        findings[j] = replace(first, message=message)
        out[i] = replace(out[i], findings=tuple(findings))
        for k, m in rest:
            dropped[k].add(m)
    for k, gone in dropped.items():
        result = out[k]
        kept = [m for m in range(len(result.findings)) if m not in gone]
        changes: dict = {"findings": tuple(result.findings[m] for m in kept)}
        if isinstance(result, FileCheck) and len(result.line_hashes) == len(result.findings):
            changes["line_hashes"] = tuple(result.line_hashes[m] for m in kept)
        out[k] = replace(result, **changes)
    return out
