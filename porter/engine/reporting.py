"""The reporting stage: what becomes of a pipeline's findings before convert or check shows them.

convert and check both go through it (porter/engine/pipeline.py per file, porter/engine/
runner.py per tree), so they agree on every finding's severity, wording and place:

- `merged_in_file`: repeats that are one thing to act on in a file become one finding (a rule's
  `once_per_subject`, then `once_per_line`, then `once_per_file`; porter/core/per_file.py; a
  Python module's `once_per_subject` is applied in the module, before its finalizers);
- `shown_in_file`: after suppression comments were applied (convert: by `fix`; check: by
  `Found.unsuppressed`), the findings about the comments themselves (PRT002 invalid, PRT003
  unused) are added, and only what the selection shows is kept (an `info` note only when its
  code is selected by name: ActiveRules.shows);
- `folded_across_files`: findings that are one decision across files become one (kept
  modules of a folder, a rule's `once_per_folder`, `once_per_tree`, `once_per_subject_in_tree`;
  porter/engine/folding.py).

What needs the syntax tree (coverage, notes in tests, one decision per function, Python's
suppressions) is decided in the Python pipeline before its finalizing kinds run:
porter/python/reporting.py. The options themselves are typed (porter/rules/params.py Reporting).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, TypeVar

from porter.core.model import FileCheck, FileResult, Finding
from porter.engine.folding import fold_across_files
from porter.rules import ActiveRules, RuleSet, known_codes
from porter.rules.kinds import SuppressionCommentParams

if TYPE_CHECKING:  # the per-file steps' modules load with the first file a run analyses: a warm
    # run, answered from the cache, needs only the fold across files
    from porter.core.edits import Found

SUPPRESSION_KIND = "suppression-comment"
R = TypeVar("R", FileResult, FileCheck)


def merged_in_file(findings: list[Finding], rules: ActiveRules, file_type: str | None = None) -> list[Finding]:
    """One file's repeats merged: one name's repeats first, then a rule's lines, then its file.
    A Python module's repeats of one name are merged in the module, before its finalizing kinds
    (porter/python/reporting.py)."""
    from porter.core.per_file import once_per_file, once_per_line, once_per_subject

    if rules.once_per_subject and file_type != "python":
        findings = once_per_subject(findings, rules.once_per_subject)
    if rules.once_per_line:
        findings = once_per_line(findings, rules.once_per_line)
    if rules.once_per_file:
        findings = once_per_file(findings, rules.once_per_file)
    return findings


def shown_in_file(rel: str, found: Found, kept: Sequence[Finding], rules: ActiveRules) -> list[Finding]:
    """The findings a command shows for one file: those suppressions left (`kept`), then the
    suppression comments' own, less what the selection does not show."""
    return [f for f in [*kept, *suppression_findings(rel, found, rules)] if rules.shows(f)]


def folded_across_files(results: list[R], rules: ActiveRules) -> list[R]:
    """Every file's result, in path order, with the findings that are one decision folded."""
    return fold_across_files(sorted(results, key=lambda r: r.path), rules.fold_scopes)


@lru_cache(maxsize=None)
def _nameable(ruleset: RuleSet) -> frozenset[str]:
    """The codes a suppression comment may name: porter's, for any target, and the project's."""
    return known_codes() | {r.code for r in ruleset.rules}


def suppression_findings(rel: str, found: Found, rules: ActiveRules) -> list[Finding]:
    """Findings of the active suppression-comment rules (PRT002 invalid, PRT003 unused) for
    the comments of one file; run after the file's suppressions were applied."""
    from porter.core.suppress import has_markers, problems as suppression_problems

    by_problem = {SuppressionCommentParams.of(r).on: r for r in rules.of_kind(SUPPRESSION_KIND)}
    if not by_problem or not has_markers(found.text):
        return []  # (the codes a comment may name load every target's rules: only when one is there)
    out = []
    for p in suppression_problems(found.text, found.comments, _nameable(rules.ruleset), rules.codes, found.used):
        rule = by_problem.get(p.kind)
        if rule is not None:
            out.append(Finding(rule.code, rule.severity, rel, p.line, p.col, p.message, rule.suggestion))
    return out
