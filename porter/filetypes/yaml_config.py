"""YAML configs: training configs (LLaMA-Factory style), accelerate configs.

Each document is identified by its top-level keys (porter/files/_config_rules.py); only
training and accelerate configs are looked at, everything else (CI workflows, data cards,
compose files, which porter/files/compose.py owns) is left alone. Edits replace single scalars
in the original text, so comments, order and quoting survive byte for byte.
"""

from __future__ import annotations

import re
from functools import lru_cache

from porter.core.edits import Found
from porter.core.model import Skipped
from porter.filetypes._common import open_yaml
from porter.filetypes._config_rules import key_screen
from porter.filetypes._configs import config_findings
from porter.rules import ActiveRules

KIND = "yaml"


@lru_cache(maxsize=None)
def _screen(rules: ActiveRules) -> re.Pattern[bytes]:
    return key_screen(rules.of_kind("config-key"), quoted=False)


def find_yaml(path: str, data: bytes, rules: ActiveRules) -> Found | Skipped | None:
    """Findings and scalar edits for one YAML file. Never raises for bad input."""
    opened = open_yaml(path, data, "YAML", _screen(rules))
    if not isinstance(opened, tuple):
        return opened
    file, docs = opened
    from porter.filetypes._yamltree import yaml_problem

    return file.found(config_findings(file, docs, rules), yaml_problem)
