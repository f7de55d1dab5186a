"""Rules as data: the rule model, the kinds they may use, loading and selection.

The bottom of porter's house above porter/core: nothing here imports a pipeline, so
`porter rules` and the loader run without the file-type libraries (tree-sitter, YAML).

Names load on first use: a command that only checks `--target` (terms.py) or starts writing
OUT does not pay for the model, the kinds and the loader before it must.
"""

import importlib

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
__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'porter.rules' has no attribute {name!r}")
