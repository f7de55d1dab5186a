"""Rules as data: the rule model, the kinds they may use, loading and selection.

The bottom of porter's house above porter/core: nothing here imports a pipeline, so
`porter rules` and the loader run without the file-type libraries (tree-sitter, YAML).
"""

from porter.rules.load import known_codes, load_rule_files, load_rules
from porter.rules.model import TARGETS, Example, Rule, RuleError, RuleSet
from porter.rules.selection import ActiveRules, Selection

__all__ = ["TARGETS", "ActiveRules", "Example", "Rule", "RuleError", "RuleSet", "Selection", "known_codes", "load_rule_files", "load_rules"]
