"""`--format sarif`: SARIF 2.1.0 for GitHub code scanning (one run, tool "porter").

URIs are relative to the checked tree (`uriBaseId` %SRCROOT%), so the file uploads from a
workflow that checks the repository root. Columns count characters, as porter's do.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from porter import __version__
from porter.checker.shown import Shown
from porter.checker.model import Checked
from porter.rules import Rule

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}
FINGERPRINT_KEY = "porter/v1"


def render(shown: Shown) -> str:
    codes = sorted({c.finding.rule for c in shown.findings})
    rules = [shown.rules.by_code(code) for code in codes]
    index = {code: i for i, code in enumerate(codes)}
    run = {
        "tool": {
            "driver": {
                "name": "porter",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_rule(code, rule) for code, rule in zip(codes, rules)],
            }
        },
        "originalUriBaseIds": {"%SRCROOT%": {"uri": shown.src.resolve().as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(c, index[c.finding.rule]) for c in shown.findings],
        "properties": {"target": shown.target, "targetVersion": shown.version},
    }
    log = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    text = json.dumps(log, indent=1, ensure_ascii=False) + "\n"
    # A file name that is not UTF-8 (surrogateescape) as a JSON escape, never an encoding error.
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _rule(code: str, rule: Rule | None) -> dict:
    if rule is None:  # a code from a file-type handler that the rule set does not know
        return {"id": code, "shortDescription": {"text": code}}
    help_parts = [rule.why]
    if rule.fix:
        help_parts.append(f"Fix: {rule.fix}")
    if rule.suggestion:
        help_parts.append(f"Suggestion: {rule.suggestion}")
    return {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.why},
        "help": {"text": "\n".join(help_parts)},
        "defaultConfiguration": {"level": _LEVELS[rule.severity]},
        "properties": {"tags": [rule.kind, f"target:{rule.target}"], "applicability": rule.applicability},
    }


def _result(checked: Checked, rule_index: int) -> dict:
    f = checked.finding
    region: dict = {"startLine": f.line, "startColumn": f.col}
    if f.end_line is not None and f.end_col is not None and (f.end_line, f.end_col) >= (f.line, f.col):
        region.update(endLine=f.end_line, endColumn=f.end_col)
    text = f.message if not f.suggestion else f"{f.message}\nSuggestion: {f.suggestion}"
    result = {
        "ruleId": f.rule,
        "ruleIndex": rule_index,
        "level": _LEVELS[f.severity],
        "message": {"text": text},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {
                        "uri": quote(f.path.encode("utf-8", "surrogateescape")),
                        "uriBaseId": "%SRCROOT%",
                    },
                    "region": region,
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: checked.fingerprint},
    }
    if f.subject:
        result["properties"] = {"subject": f.subject}
    return result
