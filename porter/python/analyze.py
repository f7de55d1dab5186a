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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import lru_cache

from porter.core.edits import Found
from porter.core.model import Finding, Skipped
from porter.core.suppress import suppressions
from porter.core.textio import Decoded, decode_python, encode_python
from porter.core.wordregex import ImportScreen, WordScreen
from porter.python.context import FileContext
from porter.python.kinds import PYTHON_KINDS
from porter.python.reporting import report_in_module
from porter.python import pieces
from porter.python.opscan import KIND as OP_KIND, api_uses, find_unsupported
from porter.rules import ActiveRules, RuleSet
from porter.rules.kinds import CODEMOD
from porter.tables.optables import load_api_table


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
) -> list[Finding]:
    """The findings (with edits) of the Python rule kinds for one parsed file.

    What the reporting options decide in the module (porter/python/reporting.py: coverage,
    notes in tests, suppressions, one decision per function) is decided before the finalizing
    kinds run (device guards, import insertion), which decide on the edits that remain.
    """
    findings: list[Finding] = []
    for kind in PYTHON_KINDS:
        kind_rules = rules.of_kind(kind.name)
        if kind_rules and kind.find is not None:
            findings.extend(kind.find(ctx, kind_rules))
    findings = report_in_module(ctx, findings, rules, suppressed, used)
    for kind in PYTHON_KINDS:
        kind_rules = rules.of_kind(kind.name)
        if kind_rules and kind.finalize is not None:
            findings = kind.finalize(ctx, kind_rules, findings)
    return findings


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
    op_rules = rules.of_kind(OP_KIND)
    try:
        tree = parse(text, path)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)  # a SyntaxError's; a ValueError (a null byte) has none
        where = f" (line {line})" if line else ""
        return Skipped(f"does not parse as Python 3: {getattr(exc, 'msg', exc)}{where}")
    ctx = FileContext.build(path, text, tree, rules.target, rules.version, rules.own_modules, rules.kept_constants)
    used: set[tuple[int, str]] = set()
    findings = rule_findings(ctx, rules, suppressions(text, "python"), used) if rule_words else []
    apis: tuple[tuple[str, str], ...] = ()
    if ops:
        table = load_api_table(rules.target, rules.version)
        uses = api_uses(ctx, table)
        findings += _rewritten_as_info(ctx, find_unsupported(ctx, op_rules, table, uses), findings)
        apis = tuple(sorted({(u.entry.api, u.entry.status) for u in uses}))
    codemod_rules = rules.of_kind(CODEMOD)
    if codemod_rules and rule_words:  # the project's codemods, after porter's own rules
        from porter.python.codemods import codemod_findings

        findings += codemod_findings(path, text, ctx.index, codemod_rules)
    return Found(
        text,
        findings,
        lambda new: encode_python(decoded, new),
        "python",
        lambda new: parse_problem(new, path),
        ctx.index,
        apis,
        used,
    )


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
