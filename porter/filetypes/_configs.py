"""What YAML and JSON configs share: the view of a parsed config file and the table of the
kinds matched in it (CONFIG_KINDS), behind porter/rules/kinds.py's Matcher.

The view holds the file's parsed documents, built once by its file type (porter/filetypes/
yaml_config.py, json_config.py). A config may be large (a million nodes: _configtree.py), so
its tree is walked once: config-key, the one kind here, walks each document's pairs once and
matches every rule over them (_config_rules.py `match_tree`), as the file types did before
this table. A second kind would share that walk by taking the pairs into the view, so a file
still costs one walk.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from porter.core.model import Finding
from porter.filetypes._common import TextFile, matched
from porter.filetypes._config_rules import hit_message, match_tree
from porter.filetypes._configtree import Node
from porter.rules import ActiveRules, Rule
from porter.rules.kinds import Matcher


@dataclass(frozen=True)
class ConfigView:
    """A YAML or JSON file as its kinds read it: the text and its parsed documents (one for JSON)."""

    file: TextFile
    docs: list[Node]


def config_key_findings(view: ConfigView, rules: list[Rule]) -> Iterator[Finding]:
    """Keys and values of training, accelerate and DeepSpeed configs: rewritten where the rule
    says what to write, else reported."""
    for doc in view.docs:
        for hit in match_tree(doc, rules):
            span = (hit.value.start, hit.value.end)
            yield view.file.finding(hit.rule, span, hit_message(hit), replacement=hit.replacement, subject=hit.key)


# The kinds a config file is matched with, in the order their findings are listed: adding a
# kind is its matcher and a line.
CONFIG_KINDS: tuple[Matcher[ConfigView], ...] = (Matcher("config-key", config_key_findings),)


def config_findings(file: TextFile, docs: list[Node], rules: ActiveRules) -> list[Finding]:
    """Every finding (with edits) of one YAML or JSON file, by its parsed documents."""
    return matched(CONFIG_KINDS, ConfigView(file, docs), rules)
