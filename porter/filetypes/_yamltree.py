"""YAML documents as config trees, with exact spans from PyYAML's node marks.

Only PyYAML's composer runs (no object construction beyond plain scalars), so unknown tags
such as `!include` are harmless. The pure-Python loader is used on purpose: its marks count
characters of the decoded text, which is what span edits need.

An alias is the node of its anchor again: the tree shares it, and porter walks it once
(_configtree.iter_pairs). What the aliases would expand to, the size a YAML loader builds, is
counted while the tree is made; a document that expands past a sane bound (an alias bomb: 9
levels of 9 aliases are 387 million nodes in 1.4 KB) is refused with its figures.
"""

from __future__ import annotations

import datetime

import yaml

from porter.filetypes._configtree import Mapping, Node, Scalar, ScalarValue, Sequence


class YamlError(ValueError):
    """The text is not valid YAML; the message says where."""


class AliasBomb(YamlError):
    """The document's aliases expand it past a sane bound; the message gives the figures."""


# A document expands past a sane bound when its aliases make it more than EXPANDED_LIMIT nodes
# and EXPANSION_RATIO times the nodes it holds. Both, as go-yaml's excessive-aliasing check:
# a large file whose entries merge a defaults block (`<<: *defaults`) grows a few times over,
# a bomb by powers.
EXPANDED_LIMIT = 1_000_000
EXPANSION_RATIO = 100


def _value(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> ScalarValue:
    try:
        value = loader.construct_object(node, deep=True)
    except yaml.YAMLError:  # an unknown tag: the text is all porter needs
        return node.value
    if isinstance(value, (datetime.date, datetime.datetime, bytes)):
        return node.value
    return value


def _convert(loader: yaml.SafeLoader, node: yaml.Node, seen: dict[int, Node], sizes: dict[int, int]) -> Node:
    """The config tree of one composed node, each node converted once (`seen`); `sizes` gets
    each node's expanded size, aliases counted as the loader would copy them."""
    if id(node) in seen:  # an alias: the same node again (and no endless loop on recursive ones)
        return seen[id(node)]
    start, end = node.start_mark.index, node.end_mark.index
    if isinstance(node, yaml.ScalarNode):
        out: Node = Scalar(_value(loader, node), start, end, node.style or "")
        seen[id(node)], sizes[id(node)] = out, 1
        return out
    # (a node inside itself, through a recursive alias, has no size yet: it counts as one)
    if isinstance(node, yaml.SequenceNode):
        seen[id(node)] = Sequence((), start, end)
        out = Sequence(tuple(_convert(loader, n, seen, sizes) for n in node.value), start, end)
        size = 1 + sum(sizes.get(id(n), 1) for n in node.value)
    else:
        seen[id(node)] = Mapping((), start, end)
        pairs = []
        for key, value in node.value:
            converted = _convert(loader, key, seen, sizes)
            if not isinstance(converted, Scalar):  # a complex key: only its text matters
                converted = Scalar(str(key.value), key.start_mark.index, key.end_mark.index, "?")
            pairs.append((converted, _convert(loader, value, seen, sizes)))
        out = Mapping(tuple(pairs), start, end)
        size = 1 + sum(sizes.get(id(k), 1) + sizes.get(id(v), 1) for k, v in node.value)
    seen[id(node)], sizes[id(node)] = out, size
    return out


def _document(loader: yaml.SafeLoader, node: yaml.Node) -> Node:
    """One document's tree; AliasBomb when its aliases expand it past the bound."""
    seen: dict[int, Node] = {}
    sizes: dict[int, int] = {}
    root = _convert(loader, node, seen, sizes)
    expanded, own = sizes[id(node)], len(seen)
    if expanded > EXPANDED_LIMIT and expanded > EXPANSION_RATIO * own:
        line = node.start_mark.line + 1
        raise AliasBomb(f"the YAML document at line {line} holds {own:,} nodes, and its aliases expand it to "
                        f"{expanded:,} (an alias bomb): a YAML loader would build every one")
    return root


# libyaml's loader is ~10x faster; given a str, its marks count characters just like the
# pure-Python loader's (tested in tests/test_config_files.py), which the span edits need.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str) -> list[Node]:
    """Every document of a YAML stream as a config tree. Raises YamlError when it is not YAML,
    AliasBomb when a document expands past the bound."""
    loader = _Loader(text)
    docs: list[Node] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                docs.append(_document(loader, node))
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
