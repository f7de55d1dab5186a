"""JSON documents as config trees, with the exact span of every value.

The stdlib parser checks validity (and names the line and column when it fails); a small
scanner built on the stdlib's own string decoder then records where each value starts and
ends, which `json.loads` does not tell.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring

from porter.filetypes._configtree import Mapping, Node, Scalar, Sequence

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?")
_LITERALS = {
    "true": True,
    "false": False,
    "null": None,
    "NaN": float("nan"),
    "Infinity": float("inf"),
    "-Infinity": float("-inf"),
}


class JsonError(ValueError):
    """The text is not valid JSON; the message says where."""


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()


def _value(text: str, pos: int) -> tuple[Node, int]:
    pos = _skip(text, pos)
    char = text[pos]
    if char == '"':
        value, end = scanstring(text, pos + 1, True)
        return Scalar(value, pos, end, "json"), end
    if char == "{":
        return _container(text, pos, "}", mapping=True)
    if char == "[":
        return _container(text, pos, "]", mapping=False)
    for word, value in _LITERALS.items():
        if text.startswith(word, pos):
            return Scalar(value, pos, pos + len(word), "literal"), pos + len(word)
    match = _NUMBER.match(text, pos)
    number = float(match.group()) if match.group(1) or match.group(2) else int(match.group())
    return Scalar(number, pos, match.end(), "literal"), match.end()


def _container(text: str, start: int, close: str, mapping: bool) -> tuple[Node, int]:
    items: list = []
    pos = _skip(text, start + 1)
    if text[pos] == close:
        end = pos + 1
        return (Mapping((), start, end) if mapping else Sequence((), start, end)), end
    while True:
        if mapping:
            key, pos = _value(text, pos)
            pos = _skip(text, pos) + 1  # the ':'
            value, pos = _value(text, pos)
            items.append((key, value))
        else:
            value, pos = _value(text, pos)
            items.append(value)
        pos = _skip(text, pos)
        if text[pos] == close:
            end = pos + 1
            return (Mapping(tuple(items), start, end) if mapping else Sequence(tuple(items), start, end)), end
        pos += 1  # the ','


def parse_json(text: str) -> Node:
    """The document as a config tree. Raises JsonError when the text is not JSON."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonError(f"{exc.msg} (line {exc.lineno}, column {exc.colno})") from exc
    except RecursionError as exc:
        raise JsonError("nested too deeply") from exc
    try:
        node, _ = _value(text, 0)
    except RecursionError as exc:
        raise JsonError("nested too deeply") from exc
    return node


def json_problem(text: str) -> str | None:
    """Why an edited JSON text no longer loads (the engine then keeps the file), or None."""
    try:
        json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        return f"invalid JSON ({getattr(exc, 'msg', exc)})"
    return None
