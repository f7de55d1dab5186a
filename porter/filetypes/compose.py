"""Compose files (docker-compose*.yml, compose*.yaml): NVIDIA device requests, CUDA base
images and environment names, with the container rules of porter/filetypes/docker.py.

Read with PyYAML's parser into the config tree of _yamltree.py, whose nodes keep their
exact spans in the text, so block and flow style (`deploy: {resources: {reservations:
{devices: [{driver: nvidia, capabilities: [gpu]}]}}}`) read alike and an edit replaces just
its name. This module claims compose files before the YAML config handler sees them.
"""

from __future__ import annotations

import fnmatch
import re

from porter.core.model import Finding
from porter.filetypes._configtree import Mapping, Scalar, Sequence, iter_pairs
from porter.filetypes.docker import Context, container_finder
from porter.filetypes.requirements import BrokenFile
from porter.rules.kinds import ComposeKeyParams

_PROPERTIES = re.compile(r"^(?:[&!]\S*\s*)+")  # an anchor or a tag before a scalar's text
_QUOTED = ("'", '"')


def compose_findings(ctx: Context) -> list[Finding]:
    """Findings (and exact environment renames) for one compose file; BrokenFile when it is
    not YAML (or its aliases expand it past a sane bound)."""
    from porter.filetypes._yamltree import YamlError, parse_yaml  # the YAML library loads only when needed

    text = ctx.index.text
    try:
        docs = parse_yaml(text)
    except YamlError as exc:
        raise BrokenFile(f"invalid YAML: {exc}") from exc
    for doc in docs:
        # The list item (a mapping in a list) each key is in, by the key's identity: a device
        # request's keys (driver, capabilities) are one request, reported once.
        item_of: dict[int, int] = {}
        met: set[int] = set()  # scalars looked at: an alias (`image: *base`) is its anchor's, reported there
        for path, key, value in iter_pairs(doc):
            name, parent = path[-1], path[-2] if len(path) > 1 else ""
            item = item_of.get(id(key), 0)
            fresh = isinstance(value, Scalar) and id(value) not in met
            met.add(id(value))
            scalar = _text(text, value) if fresh else ""
            values = [scalar] if fresh else []
            if isinstance(value, Sequence):
                flow = text.startswith("[", value.start)
                for entry in value.items:
                    if isinstance(entry, Mapping):
                        item_of.update((id(k), entry.start + 1) for k, _ in entry.pairs)
                    elif isinstance(entry, Scalar):
                        _list_value(ctx, name, entry, _text(text, entry), item, requests=not flow)
                if flow:  # `capabilities: [gpu]`: one request, reported at its key
                    values = [_text(text, e) for e in value.items if isinstance(e, Scalar)]
            name_at = key.start + (key.style in _QUOTED)
            _compose_key(ctx, parent, name, scalar, values, name_at, value.start, item)
    return ctx.findings


def _text(text: str, scalar: Scalar) -> str:
    """A scalar as the rules match it: a string's value; anything else (a number, a boolean,
    null) as written, so `gpus: 1` is "1" and `count: all` is "all"."""
    if isinstance(scalar.value, str):
        return scalar.value
    return _PROPERTIES.sub("", text[scalar.start : scalar.end])


def _compose_key(
    ctx: Context, parent: str, name: str, value: str, values: list[str], name_at: int, value_at: int, item: int
) -> None:
    """`value`: a scalar value's text ("" for a list or a mapping); `values`: what the device
    request rules match (the scalar, or a flow list's items)."""
    if value and (name == "image" or (parent == "args" and name.upper().endswith("IMAGE"))):
        ctx.image(value_at, value, value)
    if parent == "environment":
        ctx.env_name(name_at, name, value)
    _device_request(ctx, name, values, name_at, item)


def _device_request(ctx: Context, name: str, values: list[str], at: int, item: int) -> None:
    """`compose-key` rules: one finding per device request (driver and capabilities together)."""
    for rule in ctx.keys:
        globs = ComposeKeyParams.of(rule).match.get(name, [])
        if any(fnmatch.fnmatchcase(v, g) for v in values if v for g in globs):
            if item and (rule.code, item) in ctx.reported:
                continue
            ctx.reported.add((rule.code, item))
            ctx.add(rule, at, f"{rule.message or rule.summary} ({name}: {', '.join(values)})", name)


def _list_value(ctx: Context, parent: str, entry: Scalar, value: str, item: int, requests: bool) -> None:
    """A scalar list item: `- NAME=value` (environment, args) or `- gpu` (capabilities).
    `requests`: whether it is a device request of its own (a block list's item; a flow
    list's items are matched together at their key)."""
    name, eq, rest = value.partition("=")
    if parent == "environment" and eq:
        ctx.env_name(entry.start + (entry.style in _QUOTED), name, rest)
    elif parent == "args" and eq and name.upper().endswith("IMAGE"):
        ctx.image(entry.start, rest, rest)
    if requests:
        _device_request(ctx, parent, [value], entry.start, item)


find_compose = container_finder("compose", compose_findings)
