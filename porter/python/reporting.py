"""The reporting options decided inside a parsed module, before the finalizing kinds run.

porter/engine/reporting.py is the reporting stage every file type goes through (merged
repeats, suppression findings, what the selection shows, folds across files). What needs the
syntax tree is decided here, for Python findings only, and before device guards and import
insertion decide on the edits that remain (a suppressed or covered edit must not bring in
`import torch_mlu`):
- one report per subject (`once_per_subject`): a variable's mentions are one finding;
- coverage (`covered_by`): an argument of a call its covering rule reports is that rule's;
- notes in tests (`note_in_tests`): a CUDA-only stack inside a test function is a note;
- suppression comments: accepted findings leave, and are counted as used;
- one decision (`one_decision`): the rules of one decision report once per function.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from porter.core.model import Finding
from porter.core.per_file import once_per_subject
from porter.core.suppress import split_suppressed
from porter.python.context import FileContext
from porter.python.decisions import one_per_decision
from porter.rules import ActiveRules


def report_in_module(
    ctx: FileContext,
    findings: list[Finding],
    rules: ActiveRules,
    suppressed: dict[int, frozenset[str]],
    used: set[tuple[int, str]] | None = None,
) -> list[Finding]:
    """`findings` of one module with the in-module reporting options applied, in this order."""
    if rules.once_per_subject:
        findings = _once_per_subject(ctx, findings, rules.once_per_subject)
    if rules.covered_by and any(f.rule in rules.covered_by for f in findings):
        findings = _without_covered(ctx, findings, rules.covered_by)
    if rules.notes_in_tests and any(f.rule in rules.notes_in_tests for f in findings):
        findings = _notes_in_tests(ctx, findings, rules.notes_in_tests)
    if suppressed:
        findings, _ = split_suppressed(findings, suppressed, used)
    if rules.decisions and any(f.rule in rules.decisions for f in findings):
        findings = one_per_decision(ctx, findings, rules.decisions)
    return findings


_REPEATS = "reporting: the reports merged once per subject"


def _once_per_subject(ctx: FileContext, findings: list[Finding], codes: frozenset[str]) -> list[Finding]:
    """A rule's reports about one subject (a variable read in ten places) merged into the first,
    with the count: before the finalizing kinds, so that what they turn into a note (a rename a
    device guard keeps) is a note of its own. In a group of a module analysed in groups, the
    reports are recorded and merged once, for the module (`settled_once_per_subject`)."""
    if ctx.across_groups is None:
        return once_per_subject(findings, codes)
    repeats = ctx.across_groups.setdefault(_REPEATS, set())
    repeats.update((f.rule, f.line, f.col) for f in findings if f.rule in codes and f.edit is None)
    return findings


def settled_once_per_subject(ctx: FileContext, findings: list[Finding], codes: frozenset[str]) -> list[Finding]:
    """A module analysed in groups, once every group is done: the reports each group recorded
    (`_once_per_subject`) merged per subject for the module, as in a module analysed whole."""
    repeats = (ctx.across_groups or {}).get(_REPEATS)
    if not repeats:
        return findings
    merged = once_per_subject([f for f in findings if (f.rule, f.line, f.col) in repeats], codes)
    return [f for f in findings if (f.rule, f.line, f.col) not in repeats] + merged


def _without_covered(ctx: FileContext, findings: list[Finding], covered_by: dict[str, str]) -> list[Finding]:
    """`findings` less each report about an argument of a call that its covering rule reports
    at the call's name: `BitsAndBytesConfig(load_in_4bit=True)` is one thing to drop (PRT402),
    not two; `L.Fabric(accelerator="cuda")` is one Lightning without an MLU accelerator
    (PRT419), not a kept device string besides. Edits are never dropped. Before suppressions:
    a call the user accepted takes its arguments with it."""
    at: dict[tuple[int, int], list[Finding]] = {}
    reports: dict[int, list[Finding]] = {}  # the findings without an edit, by line
    for f in findings:
        if f.rule in covered_by and f.edit is None:
            at.setdefault((f.line, f.col), []).append(f)
        if f.edit is None:
            reports.setdefault(f.line, []).append(f)
    covered: set[int] = set()
    lines = {line for line, _ in at}  # (a part's place is computed only on a line that has one)
    for call in ctx.own_nodes(ast.Call):
        parts: list[ast.expr | ast.keyword] = [*call.args, *call.keywords, *(kw.value for kw in call.keywords)]
        mine = [f for part in parts if part.lineno in lines for f in at.get(ctx.index.line_col(ctx.span(part)[0]), ())]
        if not mine:
            continue
        start, end = (ctx.index.line_col(offset) for offset in ctx.span(call.func))
        # Only the lines of the call's name can hold a report at it (all of them, per call,
        # was quadratic: 1.1 of an 8 MB module's 27 s).
        near = [f for line in range(start[0], end[0] + 1) for f in reports.get(line, ())]
        reported = {
            f.rule for f in near if start <= (f.line, f.col) and (f.end_line or f.line, f.end_col or f.col) <= end
        }
        covered.update(id(f) for f in mine if covered_by[f.rule] in reported)
    return [f for f in findings if id(f) not in covered]


def skip_the_test(test: str, target: str) -> str:
    """What a note about a test that needs a CUDA-only stack asks: nothing to port in it (the
    rule's own advice, to replace the stack, would contradict the note)."""
    return f"Run {test} where its CUDA-only stack runs, or skip it on {target.upper()}; port the code it tests."


def _notes_in_tests(ctx: FileContext, findings: list[Finding], codes: frozenset[str]) -> list[Finding]:
    """A finding of a CUDA-only stack (QLoRA, FlashAttention-2) inside a test function is a
    note: that test needs the stack and cannot run on the target whatever is ported, as
    library-import says of a test's own import; what the user ports is the code it tests."""
    tests = ctx.test_functions
    out = []
    for f in findings:
        test = next((name for first, last, name in tests if first <= f.line <= last), None) if f.rule in codes else None
        if test is not None and f.edit is None and f.severity != "info":
            f = replace(
                f,
                severity="info",
                message=f"{f.message} (in {test}, a test that needs it: "
                f"it cannot run on {ctx.target.upper()}, nothing in it to port)",
                suggestion=skip_the_test(test, ctx.target),
            )
        out.append(f)
    return out
