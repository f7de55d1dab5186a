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

from porter.core.edits import Found
from porter.core.model import Skipped
from porter.filetypes._common import TextFile, open_text
from porter.filetypes._config_rules import key_screen
from porter.filetypes._configs import config_findings
from porter.filetypes._jsontree import JsonError, json_problem, parse_json
from porter.rules import ActiveRules

KIND = "json"


@lru_cache(maxsize=None)
def _screen(rules: ActiveRules) -> re.Pattern[bytes]:
    return key_screen(rules.of_kind("config-key"), quoted=True)


def find_json(path: str, data: bytes, rules: ActiveRules) -> Found | Skipped | None:
    """Findings and value edits for one JSON file. Never raises for bad input."""
    file = open_text(path, data, "JSON", _screen(rules))
    if not isinstance(file, TextFile):
        return file
    try:
        # (only its type is kept: the loaded document alive beside the config tree doubled the peak)
        is_object = isinstance(json.loads(file.text), dict)
    except (json.JSONDecodeError, RecursionError) as exc:
        if isinstance(exc, json.JSONDecodeError) and exc.msg == "Extra data" and _json_lines(file.text):
            return None  # JSON Lines named .json (a dataset, one record per line): data, never a config
        where = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        return Skipped(f"invalid JSON: {getattr(exc, 'msg', exc)}{where}; copied unchanged")
    if not is_object:  # data (a list of records) or a bare value: never a config
        return None
    try:
        root = parse_json(file.text)
    except JsonError as exc:
        return Skipped(f"invalid JSON: {exc}; copied unchanged")
    return file.found(config_findings(file, [root], rules), json_problem, comments="none")  # JSON has no comments


def _json_lines(text: str) -> bool:
    """Whether every line that holds anything is a JSON value of its own (JSON Lines)."""
    try:
        for line in text.splitlines():
            if line.strip():
                json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True
