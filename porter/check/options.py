"""What a check is asked for, and which rules that means.

Workers receive only the options (a few small values) and look the rules up in their own
cached copy, instead of unpickling the whole rule set with every file.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from porter.opscan import KIND, validate
from porter.pyconvert import active_rules
from porter.rules import Rule, RuleSet, load_rules


@dataclass(frozen=True)
class CheckOptions:
    target: str
    version: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    jobs: int | None = None
    # Only the op scan (convert has already run the rules on the same files).
    ops_only: bool = False


def check_rules(rules: RuleSet, opts: CheckOptions) -> tuple[Rule, ...]:
    """The rules a check runs: active for the version and --select/--ignore; an `opt_in`
    op-table rule only when --select names its full code."""
    active = active_rules(rules, opts.version, opts.select, opts.ignore)
    validate([r for r in active if r.kind == KIND])
    return tuple(r for r in active if not r.params.get("opt_in") or r.code in opts.select)


@lru_cache(maxsize=None)
def rules_for(opts: CheckOptions) -> tuple[RuleSet, tuple[Rule, ...]]:
    """The target's rule set and the rules this check runs (cached per process)."""
    rules = load_rules(opts.target)
    return rules, check_rules(rules, opts)
