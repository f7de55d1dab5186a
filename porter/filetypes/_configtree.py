"""A small, format-neutral view of a parsed YAML or JSON document, with exact source spans.

Rules look for keys and values here; edits then replace only the span of one scalar in the
original text, so comments, key order, quoting and every other byte stay as they were.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Union

ScalarValue = Union[str, int, float, bool, None]


@dataclass(frozen=True)
class Scalar:
    """A scalar and where its text is. `style` is '' (plain), '"' or "'" (quoted), '|'/'>' (YAML
    block scalars), 'json' (a JSON string) or 'flag' (a bare command-line switch); only plain
    and quoted scalars are ever rewritten."""

    value: ScalarValue
    start: int
    end: int
    style: str = ""


@dataclass(frozen=True)
class Mapping:
    pairs: tuple[tuple[Scalar, "Node"], ...]
    start: int
    end: int


@dataclass(frozen=True)
class Sequence:
    items: tuple["Node", ...]
    start: int
    end: int


Node = Union[Scalar, Mapping, Sequence]


def key_text(key: Scalar) -> str:
    return key.value if isinstance(key.value, str) else json.dumps(key.value)


def iter_pairs(node: Node, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Scalar, Node]]:
    """Every (dotted key path, key, value) of the document, depth first, in source order."""
    if isinstance(node, Mapping):
        for key, value in node.pairs:
            here = path + (key_text(key),)
            yield here, key, value
            yield from iter_pairs(value, here)
    elif isinstance(node, Sequence):
        for item in node.items:
            yield from iter_pairs(item, path)


def top_keys(node: Node) -> dict[str, Node]:
    """The top-level keys of a mapping document (empty for anything else)."""
    if not isinstance(node, Mapping):
        return {}
    return {key_text(k): v for k, v in node.pairs}


def render_like(scalar: Scalar, new: str) -> str | None:
    """`new` written in the style of `scalar` (same quotes), or None when that is not safe."""
    if scalar.style == "json":
        return json.dumps(new, ensure_ascii=False)
    if scalar.style == "":
        return new
    if scalar.style == '"' and not any(c in new for c in '"\\'):
        return f'"{new}"'
    if scalar.style == "'" and "'" not in new:
        return f"'{new}'"
    return None
