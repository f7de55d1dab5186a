"""The per-file pipeline for Python sources: screen, parse, match, decide, apply.

`convert_python` is a pure function of (path, bytes, rules, version), which is what lets
the runner send files to worker processes and cache results.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, replace
from functools import lru_cache

from porter.edits import agreeing_duplicates, apply_edits, edit_records, select_edits
from porter.kinds import PYTHON_KINDS
from porter.model import Finding, FileResult
from porter.pycontext import FileContext
from porter.suppress import split_suppressed, suppressions
from porter.optables import load_api_table
from porter.opscan import KIND as OP_KIND, api_uses, check as op_check
from porter.rules import RuleSet
from porter.textio import Decoded, LineIndex, decode_python, encode_python
from porter.wordregex import word_alternation


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
    whole = [w for w in words if not w.endswith("_")]
    return re.compile(r"\b" + word_alternation(whole, prefixes=[w for w in words if w.endswith("_")]))


def active_rules(rules: RuleSet, version: str | None, select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()):
    """Rules that apply to this target version, after --select/--ignore code prefixes.

    An `opt_in` rule (unknown APIs on HIP, where nearly everything is unknown) runs only
    when --select names its full code.
    """
    out = []
    for rule in rules.rules:
        if version and rule.versions and version not in rule.versions:
            continue
        if select and not rule.code.startswith(select):
            continue
        if ignore and rule.code.startswith(ignore):
            continue
        if rule.params.get("opt_in") and rule.code not in select:
            continue
        out.append(rule)
    return out


def find_python(path: str, text: str, tree: ast.Module, rules: list, target: str, version: str | None) -> list[Finding]:
    """All findings (with their edits) of the Python rules for one parsed file."""
    return _rule_findings(FileContext.build(path, text, tree, target, version), rules)


def _rule_findings(ctx: FileContext, rules: list) -> list[Finding]:
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


@dataclass(frozen=True)
class Analysis:
    """Everything porter learns from one Python file: rule findings (some with edits),
    op-table findings, and the torch APIs it uses with their status."""

    text: str
    findings: list[Finding]
    apis: tuple[tuple[str, str], ...] = ()
    skipped: str | None = None
    decoded: Decoded | None = None  # encoding and BOM, to write the converted text back
    index: LineIndex | None = None  # of `text`, built once for the analysis


def analyze_python(path: str, data: bytes, rules: RuleSet, active: list, version: str | None) -> Analysis | None:
    """Decode, screen, parse once and run the rule kinds and the op scan on one tree.

    None when the file cannot produce anything (no rule word and, with op rules active,
    no mention of torch) — then it is not even parsed.
    """
    try:
        decoded = decode_python(data)
        text = decoded.text
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        return Analysis("", [], skipped=f"cannot decode: {exc}")
    op_rules = [r for r in active if r.kind == OP_KIND]
    rule_words = screen_pattern(rules).search(text) is not None
    ops = bool(op_rules) and "torch" in text
    if not rule_words and not ops:
        return None
    try:
        tree = parse(text, path)
    except (SyntaxError, ValueError) as exc:
        where = f" (line {exc.lineno})" if getattr(exc, "lineno", None) else ""
        return Analysis(text, [], skipped=f"does not parse as Python 3: {getattr(exc, 'msg', exc)}{where}")
    ctx = FileContext.build(path, text, tree, rules.target, version)
    findings = _rule_findings(ctx, [r for r in active if r.kind != OP_KIND]) if rule_words else []
    apis: tuple[tuple[str, str], ...] = ()
    if ops:
        table = load_api_table(rules.target, version)
        uses = api_uses(ctx, table)
        findings += _rewritten_as_info(ctx, op_check(ctx, op_rules, table, uses), findings)
        apis = tuple(sorted({(u.entry.api, u.entry.status) for u in uses}))
    return Analysis(text, findings, apis, decoded=decoded, index=ctx.index)


def _rewritten_as_info(ctx: FileContext, op_findings: list[Finding], findings: list[Finding]) -> list[Finding]:
    """An API use that a rule rewrites (`.cuda()`, `torch.backends.cuda...`) stays reported,
    for its table note, but as `info`: the rule's edit already deals with the CUDA name."""
    edited = [(ctx.index.line_col(f.edit.start), ctx.index.line_col(f.edit.end)) for f in findings if f.edit]
    out = []
    for f in op_findings:
        start, end = (f.line, f.col), (f.end_line or f.line, f.end_col or f.col)
        if any(a < end and start < b or a == start for a, b in edited):
            f = replace(f, severity="info", message=f"{f.message} (porter rewrites this use)")
        out.append(f)
    return out


def parse(text: str, path: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences in user code are not ours to report
        return ast.parse(text, filename=path)


def convert_python(path: str, data: bytes, rules: RuleSet, version: str | None = None,
                   select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> FileResult:
    """Convert one Python file. Never raises for bad input: the result says what happened.

    A `# porter: ignore[CODE]` comment on a line keeps that rule's edits and findings off it.
    """
    active = active_rules(rules, version, select, ignore)
    analysis = analyze_python(path, data, rules, active, version)
    if analysis is None:
        return FileResult(path, "unchanged")
    if analysis.skipped:
        return FileResult(path, "skipped", reason=analysis.skipped)
    text = analysis.text
    findings, _ = split_suppressed(analysis.findings, suppressions(text, python=True))
    proposed = [f.edit for f in findings if f.edit]
    edits, dropped = select_edits(proposed)
    kept = tuple(f for f in findings if f.edit is None)
    if not edits:
        return FileResult(path, "unchanged", findings=kept, apis=analysis.apis)
    new_text = apply_edits(text, edits)
    try:
        parse(new_text, path)
    except SyntaxError as exc:
        return FileResult(path, "failed", findings=kept, apis=analysis.apis,
                          reason=f"porter's edits would not parse ({exc.msg}, line {exc.lineno}); file left unchanged")
    shown = sorted(edits + agreeing_duplicates(proposed, edits), key=lambda e: (e.start, e.rule))
    return FileResult(
        path,
        "changed",
        edits=tuple(edit_records(text, LineIndex(text), shown)),
        findings=kept,
        new_bytes=encode_python(analysis.decoded, new_text),
        reason=None if not dropped else f"{len(dropped)} overlapping edit(s) dropped",
        apis=analysis.apis,
    )
