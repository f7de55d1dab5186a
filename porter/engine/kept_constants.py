"""Literals kept as named constants, and the same literals handed to their modules.

A module may name a device as the value of a constant (`class TimerType(Enum): CUDA =
"cuda"`), which porter keeps: rewritten, every check for it would answer yes on the target.
Another module that hands the bare literal to a function of that module
(`nanotron_timer("step", "cuda")`, read there as `TimerType("cuda")`) must keep it too, or
the two no longer agree and the call fails at run time. Which modules keep which literals is
known only once every file has been looked at, so this is the tree run's second step: the
first step's findings say what is kept where (their subject starts with `KEPT_CONSTANT`), and
only the files that rewrote such a literal and name such a module run again, told
(ActiveRules.kept_constants).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from porter.core.model import KEPT_CONSTANT, REWRITE_PREFIX, FileCheck, FileResult
from porter.engine.own_modules import SOURCE_ROOTS


def module_name(rel: str) -> str | None:
    """The dotted module a Python file of the tree is imported as (`src/pkg/a/b.py` ->
    `pkg.a.b`, `pkg/__init__.py` -> `pkg`), or None for a file that is not a module."""
    if not rel.endswith(".py"):
        return None
    for root in SOURCE_ROOTS:
        if root and rel.startswith(f"{root}/"):
            rel = rel[len(root) + 1 :]
            break
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) if parts and all(p.isidentifier() for p in parts) else None


def kept_constants(results: list[FileResult] | list[FileCheck]) -> dict[str, set[tuple[str, str]]]:
    """Rule code -> the (module, literal) pairs the tree keeps as named constants."""
    kept: dict[str, set[tuple[str, str]]] = {}
    for result in results:
        for finding in result.findings:
            if finding.subject and finding.subject.startswith(KEPT_CONSTANT):
                module = module_name(result.path)
                if module is not None:
                    kept.setdefault(finding.rule, set()).add((module, finding.subject[len(KEPT_CONSTANT) :]))
    return kept


def to_run_again(
    results: list[FileResult] | list[FileCheck],
    kept: dict[str, set[tuple[str, str]]],
    read: Callable[[str], str | None],
) -> list[str]:
    """The Python files that rewrote a literal of a rule that keeps constants somewhere and
    whose text names one of those modules (its last part) next to the literal quoted: only
    they can have handed a kept literal to its module."""
    out = []
    for result in results:
        if result.kind != "python":
            continue
        rules = (
            {e.rule for e in result.edits}
            if isinstance(result, FileResult)
            else {f.rule for f in result.findings if f.message.startswith(REWRITE_PREFIX)}
        )
        own = module_name(result.path)
        pairs = [pair for rule in rules & kept.keys() for pair in kept[rule] if pair[0] != own]
        if not pairs:
            continue
        text = read(result.path)
        if text is not None and any(_names(text, module, value) for module, value in pairs):
            out.append(result.path)
    return out


def _names(text: str, module: str, value: str) -> bool:
    last = module.rpartition(".")[2]
    return bool(re.search(rf"\b{re.escape(last)}\b", text)) and (f'"{value}"' in text or f"'{value}'" in text)
