"""Check a tree: the engine's check run (porter/engine/runner.py) with porter's rules for a
target, cached per file, gathered into a `CheckResult`. Nothing is written."""

from __future__ import annotations

from pathlib import Path

from porter.check.model import CheckResult, FileCheck
from porter.core.fileset import FileSelection
from porter.engine.cache import ResultCache, decode_file_check, encode_file_check
from porter.engine.runner import check_tree as run_check
from porter.rules import ActiveRules, Selection, load_rules


def check_tree(
    src: Path,
    target: str,
    selection: Selection = Selection(),
    jobs: int | None = None,
    cache_dir: Path | None = None,
    exclude: Path | None = None,
    files: FileSelection | None = None,
    project_rules: tuple[Path, ...] = (),
) -> CheckResult:
    """Check every file under `src` for `target`. Reads only SRC; with `cache_dir`, reuses
    and stores per-file results. Raises RuleError before any work when a rule is malformed."""
    rules = ActiveRules(load_rules(target, tuple(project_rules)), selection)
    cache = ResultCache(cache_dir, encode_file_check, decode_file_check) if cache_dir else None
    checked = run_check(src, rules, jobs, exclude, cache, files)
    # A project codemod that could not be loaded did not run: the check is incomplete (exit 2),
    # said with the codemod file's path and why, after the findings of everything else.
    checked += [FileCheck(path, "codemod", error=f"codemod not run: {why}") for path, why in rules.ruleset.problems]
    return CheckResult(src, target, selection.version, tuple(checked))
