"""JSON configs: DeepSpeed configs (precision blocks, offload) and JSON training arguments.

A file is a DeepSpeed config when its top-level object has DeepSpeed's own keys
(`zero_optimization`, `train_micro_batch_size_per_gpu`, ...); a training config when it has
trainer keys. Every other JSON file (data,
tokenizers, model configs) is left alone without being parsed by porter's scanner.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from porter.files._common import build_result, open_text, skipped, words_screen
from porter.files._config_rules import hit_message, match_tree, screen_words
from porter.files._jsontree import JsonError, parse_json
from porter.filetypes import register
from porter.model import FileResult
from porter.pyconvert import active_rules
from porter.rules import RuleSet

KIND = "json"


def is_json_config(rel: str, head: bytes) -> bool:
    return rel.lower().endswith(".json")


@lru_cache(maxsize=None)
def _screen(rules: RuleSet) -> re.Pattern[bytes]:
    return words_screen(screen_words(rules.of_kind("config-key")), before='"')


def convert_json(path: str, data: bytes, rules: RuleSet, version: str | None = None,
                 select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> FileResult:
    """Findings and value edits for one JSON file. Never raises for bad input."""
    file = open_text(path, data, KIND, "JSON", _screen(rules))
    if isinstance(file, FileResult):
        return file
    try:
        top = json.loads(file.text)
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        return skipped(path, KIND, f"invalid JSON: {getattr(exc, 'msg', exc)}{where}; copied unchanged")
    if not isinstance(top, dict):  # data (a list of records) or a bare value: never a config
        return FileResult(path, "unchanged", kind=KIND)
    try:
        root = parse_json(file.text)
    except JsonError as exc:
        return skipped(path, KIND, f"invalid JSON: {exc}; copied unchanged")
    active = [r for r in active_rules(rules, version, select, ignore) if r.kind == "config-key"]
    findings = [
        file.finding(hit.rule, (hit.value.start, hit.value.end), hit_message(hit), replacement=hit.replacement, subject=hit.key)
        for hit in match_tree(root, active)
    ]
    return build_result(file, findings, KIND)


register(is_json_config, KIND, convert_json)
