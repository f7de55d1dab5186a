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
    """The rules a check runs: those `convert` runs (see `active_rules`), validated."""
    active = active_rules(rules, opts.version, opts.select, opts.ignore)
    validate([r for r in active if r.kind == KIND])
    return tuple(active)


@lru_cache(maxsize=None)
def rules_for(opts: CheckOptions) -> tuple[RuleSet, tuple[Rule, ...]]:
    """The target's rule set and the rules this check runs (cached per process)."""
    rules = load_rules(opts.target)
    return rules, check_rules(rules, opts)
