"""The rule model: what one rule is and a target's set of rules.

Every layer above reads rules; none of them is needed to describe one. The model's words
(targets, severities, RuleError) are terms.py's; a rule's kind-specific fields are a typed
object of its kind's parameters class (porter/rules/params.py, porter/rules/kinds.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from porter.core.severity import Severity
from porter.rules.params import Params


@dataclass(frozen=True)
class Example:
    """A documented case of a rule, run as a fixture (tests/test_rule_examples.py).

    `setup` is context the case needs and the rule leaves alone (imports, the keys that make
    a YAML file a training config); `before` becomes `after` (no `after`: the rule reports
    and changes nothing) in a file named `file` (default: the kind's example file), with only
    this rule and the rules named in `also` running.
    """

    before: str
    after: str | None = None
    setup: str = ""
    file: str | None = None
    also: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    kind: str
    target: str
    summary: str
    why: str
    severity: Severity
    applicability: str
    examples: tuple[Example, ...]
    message: str | None = None
    suggestion: str | None = None
    # torch_mlu lines the rule is for (e.g. ["2.4"]); empty means every version.
    versions: tuple[str, ...] = ()
    # What the rule does when it fixes, in a sentence, for `porter rules CODE`.
    fix: str | None = None
    # APIs the rule writes that the vendor's API list of a line does not name, each with the
    # source that shows it exists (a torch_mlu file, the vendor's converter, release notes).
    api_sources: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    # The kind's own fields, validated when the rule loaded: read them with the kind's class
    # (`QualifiedNameParams.of(rule)`), which checks the kind.
    params: Params = field(default_factory=Params, hash=False, compare=False)
    source: str = ""


@dataclass(frozen=True, eq=False)
class RuleSet:
    target: str
    rules: tuple[Rule, ...]
    digest: str  # hash of the rule files, part of the cache key
    # (file, why) of each of the project's codemods that could not be loaded: it does not run,
    # the rest of the run goes on and reports it as a failure (porter/rules/codemods.py).
    problems: tuple[tuple[str, str], ...] = ()

    # Identity is the target and the digest of the files: cheap to hash, and rule sets are
    # keys of several per-process caches (screens, rule lookups) on the hot path.
    def __hash__(self) -> int:
        return hash((self.target, self.digest))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RuleSet) and (self.target, self.digest) == (other.target, other.digest)

    def by_code(self, code: str) -> Rule | None:
        return next((r for r in self.rules if r.code == code), None)

    def of_kind(self, kind: str) -> list[Rule]:
        return [r for r in self.rules if r.kind == kind]
