"""The Python pipeline: screen, parse once, run the rule kinds and the op scan on one tree
(then the project's codemods, porter/python/codemods.py, on the files they screen in).

`find_python` is a pure function of (path, bytes, active rules): it returns what it found
(a `Found`, porter/core/edits.py) and the engine applies it (`convert`) or reports it
(`check`). Suppression comments are honoured before the finalizing kinds run, so a
suppressed edit neither happens nor brings in `import torch_mlu`.
"""

from __future__ import annotations

import ast
import gc
import warnings
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from porter.core.edits import Found
from porter.core.forked import forked_map, task_processes
from porter.core.model import Finding, Skipped
from porter.core.suppress import suppressions
from porter.core.textio import Decoded, LineIndex, decode_python, encode_python
from porter.core.wordregex import ImportScreen, WordScreen
from porter.python.context import FileContext, Walk
from porter.python.kinds import PYTHON_KINDS
from porter.python.reporting import report_in_module, settled_once_per_subject
from porter.python import grouped, pieces
from porter.python.opscan import KIND as OP_KIND, api_uses, find_unsupported
from porter.rules import ActiveRules, RuleSet
from porter.rules.kinds import CODEMOD
from porter.tables.optables import ApiTable, load_api_table


# An import of torch (`import torch.nn as nn`, `import os, torch`, `from torch import nn`), or
# text that looks like one. The op scan names only what resolves to `torch.` through the
# file's own imports: a file without one (torch named in strings, help texts, `torch_dtype`)
# has no use to find, and is not parsed for the scan.
_TORCH_IMPORT = ImportScreen(["torch"])


@lru_cache(maxsize=None)
def word_screen(rules: ActiveRules | RuleSet) -> WordScreen:
    """A screen that finds a word in every file any of the run's Python rules (or any rule of
    a rule set) could fire on, and some more; none in any file when no rule has a word."""
    words: set[str] = set()
    imported: set[str] = set()  # packages a kind looks for only where they are imported
    for kind in PYTHON_KINDS:
        kind_rules = rules.of_kind(kind.name)
        if kind_rules and kind.screens_imports:
            imported |= kind.screen(kind_rules)
        elif kind_rules:
            words |= kind.screen(kind_rules)
    if rules.of_kind(CODEMOD):  # the project's codemods (libcst and difflib load only then)
        from porter.python.codemods import screen_words

        words |= screen_words(rules.of_kind(CODEMOD))
    words.discard("")
    # Whole words (`cuda` but not `use_cuda_amp`); a word ending in "_" is a prefix (`NCCL_`);
    # one starting with "*" is found anywhere, inside a longer name (`*_CUDA_ON` in RWKV_CUDA_ON).
    inner = [w.lstrip("*") for w in words if w.startswith("*")]
    words = {w for w in words if not w.startswith("*")}
    return WordScreen([w for w in words if not w.endswith("_")], [w for w in words if w.endswith("_")], inner, imported)


def rule_findings(
    ctx: FileContext,
    rules: ActiveRules,
    suppressed: dict[int, frozenset[str]],
    used: set[tuple[int, str]] | None = None,
    group: tuple[int, int] | None = None,
) -> list[Finding]:
    """The findings (with edits) of the Python rule kinds for one parsed file; with `group`
    (its first and last line), for one group of a module analysed in groups
    (porter/python/grouped.py): the group's own findings, before what the kinds decide for
    the whole module (`settled`).

    What the reporting options decide in the module (porter/python/reporting.py: coverage,
    notes in tests, suppressions, one decision per function) is decided before the finalizing
    kinds run (device guards, import insertion), which decide on the edits that remain.
    """
    findings: list[Finding] = []
    for kind in PYTHON_KINDS:
        kind_rules = rules.of_kind(kind.name)
        if kind_rules and kind.find is not None:
            findings.extend(kind.find(ctx, kind_rules))
    if group is not None:
        findings = _on_lines(findings, group)
    findings = report_in_module(ctx, findings, rules, suppressed, used)
    findings = _finalized(ctx, rules, findings, whole_module=group is None)
    # (a guard kept in another group's skeleton may be finalized here too: only its own are kept)
    return findings if group is None else _on_lines(findings, group)


def settled(ctx: FileContext, rules: ActiveRules, findings: list[Finding]) -> list[Finding]:
    """A module analysed in groups, once every group is done: what each kind decides for the
    whole module from every group's findings (on the context of the module's skeleton)."""
    for kind in PYTHON_KINDS:
        kind_rules = rules.of_kind(kind.name)
        if kind_rules and kind.settle is not None:
            findings = kind.settle(ctx, kind_rules, findings)
    if rules.once_per_subject:
        findings = settled_once_per_subject(ctx, findings, rules.once_per_subject)
    for kind in PYTHON_KINDS:
        kind_rules = rules.of_kind(kind.name)
        if kind_rules and kind.finalize is not None and kind.whole_module:
            findings = kind.finalize(ctx, kind_rules, findings)
    return findings


def _finalized(ctx: FileContext, rules: ActiveRules, findings: list[Finding], whole_module: bool) -> list[Finding]:
    """`findings` after the finalizing kinds; those that decide for the whole module from every
    finding (PythonKind.whole_module) only with `whole_module`."""
    for kind in PYTHON_KINDS:
        kind_rules = rules.of_kind(kind.name)
        if kind_rules and kind.finalize is not None and (whole_module or not kind.whole_module):
            findings = kind.finalize(ctx, kind_rules, findings)
    return findings


def _on_lines(findings: list[Finding], lines: tuple[int, int]) -> list[Finding]:
    first, last = lines
    return [f for f in findings if first <= f.line <= last]


def find_python(path: str, data: bytes, rules: ActiveRules) -> Found | Skipped | None:
    """Decode, screen, parse once and run the rule kinds and the op scan on one tree.

    None when the file cannot produce anything (no rule word and, with op rules active,
    no import of torch): then it is not even parsed.
    """
    try:
        decoded = decode_python(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        return Skipped(f"cannot decode: {exc}")
    text = decoded.text
    op_rules = rules.of_kind(OP_KIND)
    rule_words = word_screen(rules).search(text)
    ops = bool(op_rules) and "torch" in text and _TORCH_IMPORT.search(text)
    if not rule_words and not ops:
        return None
    with collector_paused():  # the tree is freed (by its count of references) on the way out
        return _analysed(path, decoded, rules, bool(rule_words), bool(ops))


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cycle collection while a file is analysed: its syntax tree is millions of objects
    without a cycle among them, which the collector would scan at every collection of their
    generation (15% of a 4 MB module's convert); freed by reference counting when the
    analysis is done, the tree is never scanned at all. What the analysis leaves in cycles is
    collected afterwards."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _analysed(path: str, decoded: Decoded, rules: ActiveRules, rule_words: bool, ops: bool) -> Found | Skipped:
    """`find_python` of a screened-in file: parse once, run the rule kinds and the op scan."""
    text = decoded.text
    if len(text) > grouped.WHOLE_CHARS:
        plan = grouped.plan(text, path, _parse_whole, processes=task_processes())
        if plan is not None:
            return _analysed_in_groups(path, decoded, rules, rule_words, ops, plan)
    try:
        tree = parse(text, path)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)  # a SyntaxError's; a ValueError (a null byte) has none
        where = f" (line {line})" if line else ""
        return Skipped(f"does not parse as Python 3: {getattr(exc, 'msg', exc)}{where}")
    ctx = _context(path, text, rules, LineIndex(text), tree)
    used: set[tuple[int, str]] = set()
    findings = rule_findings(ctx, rules, suppressions(text, "python"), used) if rule_words else []
    apis: set[tuple[str, str]] = set()
    if ops:
        findings += _op_findings(ctx, rules, load_api_table(rules.target, rules.version), findings, apis)
    return _found(path, decoded, rules, rule_words, findings, ctx.index, apis, used)


def _analysed_in_groups(
    path: str, decoded: Decoded, rules: ActiveRules, rule_words: bool, ops: bool, plan: grouped.Plan
) -> Found:
    """`_analysed` of a very large module, a group of statements at a time
    (porter/python/grouped.py), side by side where the run leaves this file more than one
    process: each group's findings for its own lines, then what the kinds decide for the whole
    module, on the skeleton of every statement, with all of them."""
    text = decoded.text
    table = load_api_table(rules.target, rules.version) if ops else None
    suppressed = suppressions(text, "python")
    index = LineIndex(text)
    skeleton = grouped.Skeleton(plan)
    facts: dict[Hashable, Any] = {}  # (each process decides them once)

    def analysed(number: int) -> _GroupFindings:
        own = grouped.own_statements(plan, number, text, path, _parse_whole)
        lines = grouped.owned_lines(own)
        done = _GroupFindings([], set(), set(), {})
        with skeleton.group(number, own) as view:
            ctx = _context(path, text, rules, index, view, done.across, lines, facts)
            if rule_words:
                done.findings += rule_findings(ctx, rules, suppressed, done.used, lines)
            if table is not None:
                done.findings += _op_findings(ctx, rules, table, done.findings, done.apis)
        return done

    findings: list[Finding] = []
    used: set[tuple[int, str]] = set()
    apis: set[tuple[str, str]] = set()
    across: dict[Hashable, set[Any]] = {}
    for done in forked_map(analysed, range(len(plan.groups)), task_processes()):
        findings += done.findings
        used |= done.used
        apis |= done.apis
        for key, values in done.across.items():
            across.setdefault(key, set()).update(values)
    with skeleton.whole() as view:
        ctx = _context(path, text, rules, index, view, across)
        if rule_words:
            findings = settled(ctx, rules, findings)
    return _found(path, decoded, rules, rule_words, findings, index, apis, used)


def _found(
    path: str,
    decoded: Decoded,
    rules: ActiveRules,
    rule_words: bool,
    findings: list[Finding],
    index: LineIndex,
    apis: set[tuple[str, str]],
    used: set[tuple[int, str]],
) -> Found:
    """What the module's analysis found, with the project's codemods' findings after porter's
    own rules', and how the edited text is encoded and verified."""
    codemod_rules = rules.of_kind(CODEMOD)
    if codemod_rules and rule_words:
        from porter.python.codemods import codemod_findings

        findings = findings + codemod_findings(path, decoded.text, index, codemod_rules)
    return Found(
        decoded.text,
        findings,
        lambda new: encode_python(decoded, new),
        "python",
        lambda new: parse_problem(new, path),
        index,
        tuple(sorted(apis)),
        used,
    )


@dataclass
class _GroupFindings:
    """What one group of a module analysed in groups found (sent back from a worker)."""

    findings: list[Finding]
    used: set[tuple[int, str]]  # the suppression comments that took a finding
    apis: set[tuple[str, str]]
    across: dict[Hashable, set[Any]]  # what kinds recorded for the module (PythonKind.settle)


def _context(
    path: str,
    text: str,
    rules: ActiveRules,
    index: LineIndex,
    view: ast.Module | grouped.GroupView,
    across_groups: dict[Hashable, set[Any]] | None = None,
    own_lines: tuple[int, int] | None = None,
    module_facts: dict[Hashable, Any] | None = None,
) -> FileContext:
    """The context of a module (one walk of it), or of a group of one (porter/python/grouped.py)."""
    if isinstance(view, ast.Module):
        walk = Walk.of(view)
        view = grouped.GroupView(view, walk.parents, walk.by_type, walk.by_type, None)
    return FileContext.assembled(
        path,
        text,
        view.tree,
        view.parents,
        view.by_type,
        view.own_by_type,
        rules.target,
        rules.version,
        rules.own_modules,
        rules.kept_constants,
        index,
        across_groups,
        own_lines,
        module_facts,
        view.rest,
    )


def _op_findings(
    ctx: FileContext, rules: ActiveRules, table: ApiTable, findings: list[Finding], apis: set[tuple[str, str]]
) -> list[Finding]:
    """The op scan's findings (with `apis` gaining every API use it found and its status)."""
    uses = api_uses(ctx, table)
    apis.update((u.entry.api, u.entry.status) for u in uses)
    return _rewritten_as_info(ctx, find_unsupported(ctx, rules.of_kind(OP_KIND), table, uses), findings)


def _rewritten_as_info(ctx: FileContext, op_findings: list[Finding], findings: list[Finding]) -> list[Finding]:
    """An API use that a rule rewrites (`.cuda()`, `torch.backends.cuda...`) stays reported,
    for its table note, but as `info`: the rule's edit already deals with the CUDA name."""
    # Edited spans by each line they touch: a large file has thousands of both (one test per
    # pair was quadratic: 10 of a 1 MB file's 26 s).
    by_line: dict[int, list[tuple[tuple[int, int], tuple[int, int]]]] = {}
    for f in findings:
        if f.edit:
            span = (ctx.index.line_col(f.edit.start), ctx.index.line_col(f.edit.end))
            for line in range(span[0][0], span[1][0] + 1):
                by_line.setdefault(line, []).append(span)
    out = []
    for f in op_findings:
        start, end = (f.line, f.col), (f.end_line or f.line, f.end_col or f.col)
        near = [span for line in range(start[0], end[0] + 1) for span in by_line.get(line, ())]
        if any(a < end and start < b or a == start for a, b in near):
            f = replace(f, severity="info", message=f"{f.message} (porter rewrites this use)")
        out.append(f)
    return out


def parse(text: str, path: str) -> ast.Module:
    """`ast.parse`'s tree of `text`; a very large module's made in pieces (porter/python/pieces.py)."""
    return pieces.parse(text, path, _parse_whole)


def _parse_whole(text: str, path: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences in user code are not ours to report
        return ast.parse(text, filename=path)


def parse_problem(text: str, path: str) -> str | None:
    """Why `text` is not Python 3 (the verify step of every Python edit), or None.

    Compiling is the check: the compiler keeps its tree in C, and takes half the time and
    two thirds of the memory of `ast.parse`, whose Python objects nothing reads here. Only
    what the compiler refuses is parsed, for the answer `parse` gives: the compiler also
    refuses what parses (`return` outside a function), which never kept a file unchanged.
    A very large text is parsed in pieces first (porter/python/pieces.py: the compiler's
    time and memory grow faster than the text); if they all parse, the whole does."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if pieces.parses_in_pieces(text, path):
            return None
        try:
            compile(text, path, "exec", dont_inherit=True)
            return None
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # (a tree too deep for the compiler's own limits: parse decides, as before)
    try:
        parse(text, path)
    except (SyntaxError, ValueError) as exc:
        return f"does not parse: {getattr(exc, 'msg', exc)}, line {getattr(exc, 'lineno', '?')}"
    return None
