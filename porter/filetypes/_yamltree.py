"""YAML documents as config trees, with exact spans from PyYAML's node marks.

Only PyYAML's composer runs (no object construction beyond plain scalars), so unknown tags
such as `!include` are harmless. The pure-Python loader is used on purpose: its marks count
characters of the decoded text, which is what span edits need.
"""

from __future__ import annotations

import datetime

import yaml

from porter.filetypes._configtree import Mapping, Node, Scalar, ScalarValue, Sequence


class YamlError(ValueError):
    """The text is not valid YAML; the message says where."""


def _value(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> ScalarValue:
    try:
        value = loader.construct_object(node, deep=True)
    except yaml.YAMLError:  # an unknown tag: the text is all porter needs
        return node.value
    if isinstance(value, (datetime.date, datetime.datetime, bytes)):
        return node.value
    return value


def _convert(loader: yaml.SafeLoader, node: yaml.Node, seen: dict[int, Node]) -> Node:
    if id(node) in seen:  # an alias: the same node again (and no endless loop on recursive ones)
        return seen[id(node)]
    start, end = node.start_mark.index, node.end_mark.index
    if isinstance(node, yaml.ScalarNode):
        out: Node = Scalar(_value(loader, node), start, end, node.style or "")
        seen[id(node)] = out
        return out
    if isinstance(node, yaml.SequenceNode):
        seen[id(node)] = Sequence((), start, end)
        out = Sequence(tuple(_convert(loader, n, seen) for n in node.value), start, end)
    else:
        seen[id(node)] = Mapping((), start, end)
        pairs = []
        for key, value in node.value:
            converted = _convert(loader, key, seen)
            if not isinstance(converted, Scalar):  # a complex key: only its text matters
                converted = Scalar(str(key.value), key.start_mark.index, key.end_mark.index, "?")
            pairs.append((converted, _convert(loader, value, seen)))
        out = Mapping(tuple(pairs), start, end)
    seen[id(node)] = out
    return out


# libyaml's loader is ~10x faster; given a str, its marks count characters just like the
# pure-Python loader's (tested in tests/test_config_files.py), which the span edits need.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str) -> list[Node]:
    """Every document of a YAML stream as a config tree. Raises YamlError when it is not YAML."""
    loader = _Loader(text)
    docs: list[Node] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                docs.append(_convert(loader, node, {}))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlError(f"{problem}{where}") from exc
    finally:
        loader.dispose()
    return docs


def yaml_problem(text: str) -> str | None:
    """Why an edited YAML text no longer loads (the engine then keeps the file), or None."""
    try:
        parse_yaml(text)
    except YamlError as exc:
        return f"invalid YAML ({exc})"
    return None
