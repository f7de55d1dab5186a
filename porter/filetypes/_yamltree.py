"""YAML documents as config trees, with exact spans from PyYAML's event marks.

Only PyYAML's parser runs, and the resolver and constructor for scalars that are not plain
strings, so unknown tags such as `!include` are harmless. The pure-Python loader is used on purpose: its marks count
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


_STR = "tag:yaml.org,2002:str"


def _value(loader: yaml.SafeLoader, event: yaml.ScalarEvent) -> ScalarValue:
    """A scalar's value, as the loader's composer and constructor would make it."""
    tag = event.tag
    if tag is None or tag == "!":
        tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
    if tag == _STR:  # most scalars: the constructor would give back their text, at a third of the parse
        return event.value
    node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
    try:
        value = loader.construct_object(node, deep=True)
    except yaml.YAMLError:  # an unknown tag: the text is all porter needs
        return event.value
    finally:
        loader.constructed_objects.clear()  # (it would keep every node it made alive)
    if isinstance(value, (datetime.date, datetime.datetime, bytes)):
        return event.value
    return value


class _Open:
    """A sequence or mapping whose end event has not come yet."""

    __slots__ = ("mapping", "start", "anchor", "children", "size")

    def __init__(self, mapping: bool, start: int, anchor: str | None) -> None:
        self.mapping, self.start, self.anchor = mapping, start, anchor
        self.children: list[Node] = []
        self.size = 1  # itself, then what each child expands to


def _document(loader: yaml.SafeLoader, text: str) -> Node:
    """One document's tree, built from the parser's events as PyYAML's composer would build
    its nodes, without them (a node and its two marks weigh more than the whole config tree:
    a 5 MB file peaked at 353 MiB). Each anchor's node is made once and an alias is that
    node again; every node's expanded size (an alias counts as the copy a loader makes) is
    summed on the way. AliasBomb when the document expands past the bound."""
    loader.get_event()  # DocumentStart
    anchors: dict[str, tuple[Node, int]] = {}
    stack: list[_Open] = []
    own = 0
    while True:
        event = loader.get_event()
        if isinstance(event, yaml.AliasEvent):
            if event.anchor not in anchors:
                raise yaml.composer.ComposerError(None, None, "found undefined alias", event.start_mark)
            node, size = anchors[event.anchor]
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            done = stack.pop()
            end, kids = event.end_mark.index, done.children
            node = (
                Mapping(tuple(zip(kids[::2], kids[1::2])), done.start, end)
                if done.mapping
                else Sequence(tuple(kids), done.start, end)
            )
            size = done.size
            if done.anchor is not None:
                anchors[done.anchor] = (node, size)
        else:
            anchor = event.anchor
            if anchor is not None and anchor in anchors:
                raise yaml.composer.ComposerError(
                    "found duplicate anchor; first occurrence", None, "second occurrence", event.start_mark
                )
            own += 1
            if isinstance(event, yaml.ScalarEvent):
                node = Scalar(_value(loader, event), event.start_mark.index, event.end_mark.index, event.style or "")
                size = 1
                if anchor is not None:
                    anchors[anchor] = (node, size)
            else:
                mapping = isinstance(event, yaml.MappingStartEvent)
                stack.append(_Open(mapping, event.start_mark.index, anchor))
                if anchor is not None:  # an alias inside itself (recursive) is an empty one, of size one
                    at = event.start_mark.index
                    anchors[anchor] = (Mapping((), at, at) if mapping else Sequence((), at, at), 1)
                continue
        if not stack:
            break
        parent = stack[-1]
        if parent.mapping and len(parent.children) % 2 == 0 and not isinstance(node, Scalar):
            # a complex key (`? [a, b]`): only its text matters
            node = Scalar(text[node.start : node.end], node.start, node.end, "?")
        parent.children.append(node)
        parent.size += size
    loader.get_event()  # DocumentEnd
    if size > EXPANDED_LIMIT and size > EXPANSION_RATIO * own:
        line = text.count("\n", 0, node.start) + 1
        raise AliasBomb(
            f"the YAML document at line {line} holds {own:,} nodes, and its aliases expand it to "
            f"{size:,} (an alias bomb): a YAML loader would build every one"
        )
    return node


# libyaml's loader is ~10x faster; given a str, its marks count characters just like the
# pure-Python loader's (tested in tests/test_config_files.py), which the span edits need.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _error(exc: yaml.YAMLError) -> YamlError:
    mark = getattr(exc, "problem_mark", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return YamlError(f"{problem}{where}")


def parse_yaml(text: str) -> list[Node]:
    """Every document of a YAML stream as a config tree. Raises YamlError when it is not YAML,
    AliasBomb when a document expands past the bound."""
    loader = _Loader(text)
    docs: list[Node] = []
    try:
        loader.get_event()  # StreamStart
        while not loader.check_event(yaml.StreamEndEvent):
            docs.append(_document(loader, text))
    except yaml.YAMLError as exc:
        raise _error(exc) from exc
    finally:
        loader.dispose()
    return docs


def yaml_problem(text: str) -> str | None:
    """Why an edited YAML text no longer loads (the engine then keeps the file), or None.
    Parsing it is the check: the edits replace scalars, never an anchor or an alias, so what
    they can break is the syntax; building the tree again cost as much as reading the file."""
    loader = _Loader(text)
    try:
        while loader.get_event() is not None:
            pass
    except yaml.YAMLError as exc:
        return f"invalid YAML ({_error(exc)})"
    finally:
        loader.dispose()
    return None
