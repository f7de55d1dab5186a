"""Check a tree: the engine's check run (porter/engine/runner.py) with porter's rules for a
target, cached per file, the baseline applied, gathered into a `CheckReport`. Nothing is written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from porter.checker.baseline import load_baseline, split_accepted
from porter.checker.model import Checked, numbered
from porter.checker.report import CheckReport
from porter.core.model import FileCheck
from porter.engine.cache import ResultCache, decode_file_check, encode_file_check
from porter.engine.runner import check_tree
from porter.rules import ActiveRules, load_rules
from porter.run_options import RunOptions

_RANK = {"info": 0, "warning": 1, "error": 2}


def run_check(paths: Sequence[Path], options: RunOptions) -> CheckReport:
    """Check the tree, or the files, `paths` as `options` say. Reads only them; with a cache
    folder, reuses and stores per-file results. Raises RuleError before any work when a rule
    is malformed, BaselineError for a baseline that cannot be used."""
    root, files = options.files(paths)
    rules = load_rules(options.target, options.rule_files)
    cache = ResultCache(options.cache_dir, encode_file_check, decode_file_check) if options.cache_dir else None
    checked = check_tree(
        root, ActiveRules(rules, options.selection), options.jobs, None, cache, files, options.max_bytes
    )
    # A project codemod that could not be loaded did not run: the check is incomplete (exit 2),
    # said with the codemod file's path and why, after the findings of everything else.
    checked += [FileCheck(path, "codemod", error=f"codemod not run: {why}") for path, why in rules.problems]
    shown, accepted = numbered(checked), 0
    if options.settings.baseline is not None:
        shown, accepted = split_accepted(shown, load_baseline(options.settings.baseline, options.target))
    return CheckReport(
        options.target,
        options.version,
        root,
        options.settings,
        tuple(c.finding for c in shown),
        tuple(checked),
        sum(f.suppressed for f in checked),
        accepted,
        _exit_code(checked, shown, options.settings.fail_on),
        rules,
        shown,
    )


def _exit_code(files: Sequence[FileCheck], shown: Sequence[Checked], fail_on: str) -> int:
    """As `porter check` exits: 2 a file failed, 1 a finding at or above `fail_on`, else 0."""
    if any(f.error for f in files):
        return 2
    return 1 if any(_RANK[c.finding.severity] >= _RANK[fail_on] for c in shown) else 0
