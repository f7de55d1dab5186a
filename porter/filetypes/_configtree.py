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


# Slots: a large config is a million of these, and an instance dictionary tripled each one.
@dataclass(frozen=True, slots=True)
class Scalar:
    """A scalar and where its text is. `style` is '' (plain), '"' or "'" (quoted), '|'/'>' (YAML
    block scalars), 'json' (a JSON string) or 'flag' (a bare command-line switch); only plain
    and quoted scalars are ever rewritten."""

    value: ScalarValue
    start: int
    end: int
    style: str = ""


@dataclass(frozen=True, slots=True)
class Mapping:
    pairs: tuple[tuple[Scalar, "Node"], ...]
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Sequence:
    items: tuple["Node", ...]
    start: int
    end: int


Node = Union[Scalar, Mapping, Sequence]


def key_text(key: Scalar) -> str:
    return key.value if isinstance(key.value, str) else json.dumps(key.value)


def _entries(node: Node, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Scalar | None, Node]]:
    """A container's children with their key paths (key None: a sequence's item)."""
    if isinstance(node, Mapping):
        for key, value in node.pairs:
            yield path + (key_text(key),), key, value
    elif isinstance(node, Sequence):
        for item in node.items:
            yield path, None, item


def iter_pairs(node: Node, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Scalar, Node]]:
    """Every (dotted key path, key, value) of the document, depth first, in source order.

    Each container is walked once: a YAML alias shares its anchor's node
    (porter/filetypes/_yamltree.py), which is met first, where its text is; walking it again
    under every alias is exponential (9 levels of 9 aliases: 387 million pairs for 1.4 KB).
    An explicit stack, not recursion: nested generators cost each pair its depth."""
    seen = {id(node)}
    stack = [_entries(node, path)]
    while stack:
        for here, key, value in stack[-1]:
            if key is not None:
                yield here, key, value
            if isinstance(value, (Mapping, Sequence)) and id(value) not in seen:
                seen.add(id(value))
                stack.append(_entries(value, here))
                break
        else:
            stack.pop()


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
