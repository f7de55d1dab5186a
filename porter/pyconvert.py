"""The per-file pipeline for Python sources: screen, parse, match, decide, apply.

`convert_python` is a pure function of (path, bytes, rules, version), which is what lets
the runner send files to worker processes and cache results.
"""

from __future__ import annotations

import ast
import re
import warnings
from functools import lru_cache

from porter.edits import agreeing_duplicates, apply_edits, edit_records, select_edits
from porter.kinds import PYTHON_KINDS
from porter.model import Finding, FileResult
from porter.pycontext import FileContext
from porter.rules import RuleSet
from porter.textio import LineIndex, decode_python, encode_python


@lru_cache(maxsize=None)
def screen_pattern(rules: RuleSet) -> re.Pattern[str]:
    """A regex that matches every file any Python rule could fire on (and some more)."""
    words: set[str] = set()
    for kind_name, module in PYTHON_KINDS.items():
        kind_rules = rules.of_kind(kind_name)
        if kind_rules:
            words |= module.screen_words(kind_rules)
    words.discard("")
    # Whole words (`cuda` but not `use_cuda_amp`); a word ending in "_" is a prefix (`NCCL_`).
    alternatives = [re.escape(w) + ("" if w.endswith("_") else r"\b") for w in sorted(words, key=len, reverse=True)]
    return re.compile(r"\b(?:" + "|".join(alternatives) + ")")


def active_rules(rules: RuleSet, version: str | None, select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()):
    """Rules that apply to this target version, after --select/--ignore code prefixes."""
    out = []
    for rule in rules.rules:
        if version and rule.versions and version not in rule.versions:
            continue
        if select and not rule.code.startswith(select):
            continue
        if ignore and rule.code.startswith(ignore):
            continue
        out.append(rule)
    return out


def find_python(path: str, text: str, tree: ast.Module, rules: list, target: str, version: str | None) -> list[Finding]:
    """All findings (with their edits) of the Python rules for one parsed file."""
    ctx = FileContext.build(path, text, tree, target, version)
    findings: list[Finding] = []
    by_kind: dict[str, list] = {}
    for rule in rules:
        by_kind.setdefault(rule.kind, []).append(rule)
    for kind_name, module in PYTHON_KINDS.items():
        if kind_name in by_kind and hasattr(module, "check"):
            findings.extend(module.check(ctx, by_kind[kind_name]))
    for kind_name, module in PYTHON_KINDS.items():
        if kind_name in by_kind and hasattr(module, "finalize"):
            findings = module.finalize(ctx, by_kind[kind_name], findings)
    return findings


def parse(text: str, path: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences in user code are not ours to report
        return ast.parse(text, filename=path)


def convert_python(path: str, data: bytes, rules: RuleSet, version: str | None = None,
                   select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> FileResult:
    """Convert one Python file. Never raises for bad input: the result says what happened."""
    try:
        decoded = decode_python(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        return FileResult(path, "skipped", reason=f"cannot decode: {exc}")
    text = decoded.text
    if not screen_pattern(rules).search(text):
        return FileResult(path, "unchanged")
    try:
        tree = parse(text, path)
    except (SyntaxError, ValueError) as exc:
        where = f" (line {exc.lineno})" if getattr(exc, "lineno", None) else ""
        return FileResult(path, "skipped", reason=f"does not parse as Python 3: {getattr(exc, 'msg', exc)}{where}")
    findings = find_python(path, text, tree, active_rules(rules, version, select, ignore), rules.target, version)
    proposed = [f.edit for f in findings if f.edit]
    edits, dropped = select_edits(proposed)
    kept = [f for f in findings if f.edit is None]
    if not edits:
        return FileResult(path, "unchanged", findings=tuple(kept))
    new_text = apply_edits(text, edits)
    try:
        parse(new_text, path)
    except SyntaxError as exc:
        return FileResult(path, "failed", findings=tuple(kept), reason=f"porter's edits would not parse ({exc.msg}, line {exc.lineno}); file left unchanged")
    shown = sorted(edits + agreeing_duplicates(proposed, edits), key=lambda e: (e.start, e.rule))
    records = edit_records(text, LineIndex(text), shown)
    return FileResult(
        path,
        "changed",
        edits=tuple(records),
        findings=tuple(kept),
        new_bytes=encode_python(decoded, new_text),
        reason=None if not dropped else f"{len(dropped)} overlapping edit(s) dropped",
    )
