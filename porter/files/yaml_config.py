"""YAML configs: training configs (LLaMA-Factory style), accelerate configs.

Each document is identified by its top-level keys (porter/files/_config_rules.py); only
training and accelerate configs are looked at, everything else (CI workflows, data cards,
compose files, which porter/files/compose.py owns) is left alone. Edits replace single scalars
in the original text, so comments, order and quoting survive byte for byte.
"""

from __future__ import annotations

import re
from functools import lru_cache

from porter.files._common import build_result, open_text, skipped, words_screen
from porter.files._config_rules import hit_message, match_tree, screen_words
from porter.files.compose import is_compose  # compose files are compose.py's
from porter.filetypes import register
from porter.model import FileResult
from porter.pyconvert import active_rules
from porter.rules import RuleSet

KIND = "yaml"


def is_yaml_config(rel: str, head: bytes) -> bool:
    return rel.lower().endswith((".yaml", ".yml")) and not is_compose(rel, head)


@lru_cache(maxsize=None)
def _screen(rules: RuleSet) -> re.Pattern[bytes]:
    return words_screen(screen_words(rules.of_kind("config-key")))


def convert_yaml(path: str, data: bytes, rules: RuleSet, version: str | None = None,
                 select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> FileResult:
    """Findings and scalar edits for one YAML file. Never raises for bad input."""
    file = open_text(path, data, KIND, "YAML", _screen(rules))
    if isinstance(file, FileResult):
        return file
    from porter.files._yamltree import YamlError, parse_yaml  # the YAML library loads only when needed

    try:
        docs = parse_yaml(file.text)
    except YamlError as exc:
        return skipped(path, KIND, f"invalid YAML: {exc}; copied unchanged")
    active = [r for r in active_rules(rules, version, select, ignore) if r.kind == "config-key"]
    findings = []
    for doc in docs:
        for hit in match_tree(doc, active):
            span = (hit.value.start, hit.value.end)
            findings.append(file.finding(hit.rule, span, hit_message(hit), replacement=hit.replacement, subject=hit.key))
    return build_result(file, findings, KIND)


register(is_yaml_config, KIND, convert_yaml)
