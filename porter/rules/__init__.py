"""Rules as data: the rule model, the kinds they may use, loading and selection.

The bottom of porter's house above porter/core: nothing here imports a pipeline, so
`porter rules` and the loader run without the file-type libraries (tree-sitter, YAML).

Names load on first use (PEP 562): a command that only checks `--target` (terms.py) or starts
writing OUT does not pay for the model, the kinds and the loader before it must. The imports
under TYPE_CHECKING say where each name lives, for readers and type checkers alike.
"""

from typing import TYPE_CHECKING

from porter.core.lazy import names_on_first_use

if TYPE_CHECKING:
    from porter.rules.load import known_codes, load_rule_files, load_rules
    from porter.rules.model import Example, Rule, RuleSet
    from porter.rules.selection import ActiveRules, Selection
    from porter.rules.terms import TARGETS, RuleError

_WHERE = {
    "TARGETS": "porter.rules.terms",
    "RuleError": "porter.rules.terms",
    "Example": "porter.rules.model",
    "Rule": "porter.rules.model",
    "RuleSet": "porter.rules.model",
    "ActiveRules": "porter.rules.selection",
    "Selection": "porter.rules.selection",
    "known_codes": "porter.rules.load",
    "load_rule_files": "porter.rules.load",
    "load_rules": "porter.rules.load",
}
__all__ = [
    "TARGETS",
    "ActiveRules",
    "Example",
    "Rule",
    "RuleError",
    "RuleSet",
    "Selection",
    "known_codes",
    "load_rule_files",
    "load_rules",
]

__getattr__ = names_on_first_use(__name__, _WHERE)
