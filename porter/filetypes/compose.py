"""Compose files (docker-compose*.yml, compose*.yaml): NVIDIA device requests, CUDA base
images, environment names and pip's index variables, with the container kinds Dockerfiles
have too (porter/filetypes/_containers.py).

Read with PyYAML's parser into the config tree of _yamltree.py, whose nodes keep their
exact spans in the text, so block and flow style (`deploy: {resources: {reservations:
{devices: [{driver: nvidia, capabilities: [gpu]}]}}}`) read alike and an edit replaces just
its name. This module claims compose files before the YAML config handler sees them.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from porter.core.edits import Found
from porter.core.model import Finding, Skipped
from porter.core.textio import LineIndex
from porter.filetypes._common import matched
from porter.filetypes._configtree import Mapping, Scalar, Sequence, iter_pairs
from porter.filetypes._containers import ContainerView, EnvName, Image, env_findings, image_findings, index_env_findings
from porter.filetypes.requirements import BrokenFile, text_found
from porter.rules import ActiveRules, Rule
from porter.rules.kinds import REQUIREMENT_STRING, ComposeKeyParams, Matcher

_PROPERTIES = re.compile(r"^(?:[&!]\S*\s*)+")  # an anchor or a tag before a scalar's text
_QUOTED = ("'", '"')


@dataclass(frozen=True)
class Request:
    """What a device request rule may match: a key (`driver`), the values it has (a scalar, or
    a flow list's items: `capabilities: [gpu]`), where it is reported, and the list item
    (a mapping in a list) it belongs to, 0 for none: one request's keys are reported once."""

    name: str
    values: list[str]
    offset: int
    item: int


@dataclass(frozen=True)
class ComposeView(ContainerView):
    """A compose file as its kinds read it: the container settings, and its device requests."""

    requests: list[Request] = field(default_factory=list)


def read_compose(path: str, text: str, rules: ActiveRules) -> ComposeView:
    """The compose file's images, environment names and device requests; BrokenFile when it is
    not YAML (or its aliases expand it past a sane bound)."""
    from porter.filetypes._yamltree import YamlError, parse_yaml  # the YAML library loads only when needed

    try:
        docs = parse_yaml(text)
    except YamlError as exc:
        raise BrokenFile(f"invalid YAML: {exc}") from exc
    view = ComposeView(path, LineIndex(text), rules)
    for doc in docs:
        # The list item (a mapping in a list) each key is in, by the key's identity: a device
        # request's keys (driver, capabilities) are one request, reported once.
        item_of: dict[int, int] = {}
        met: set[int] = set()  # scalars looked at: an alias (`image: *base`) is its anchor's, reported there
        for keys, key, value in iter_pairs(doc):
            name, parent = keys[-1], keys[-2] if len(keys) > 1 else ""
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
                        _list_value(view, name, entry, _text(text, entry), item, requests=not flow)
                if flow:  # `capabilities: [gpu]`: one request, reported at its key
                    values = [_text(text, e) for e in value.items if isinstance(e, Scalar)]
            name_at = key.start + (key.style in _QUOTED)
            if scalar and (name == "image" or (parent == "args" and name.upper().endswith("IMAGE"))):
                view.images.append(Image(value.start, scalar, scalar))
            if parent == "environment":
                view.env.append(EnvName(name_at, name, scalar))
            if any(values):  # (an empty value requests nothing)
                view.requests.append(Request(name, values, name_at, item))
    return view


def _text(text: str, scalar: Scalar) -> str:
    """A scalar as the rules match it: a string's value; anything else (a number, a boolean,
    null) as written, so `gpus: 1` is "1" and `count: all` is "all"."""
    if isinstance(scalar.value, str):
        return scalar.value
    return _PROPERTIES.sub("", text[scalar.start : scalar.end])


def request_findings(view: ComposeView, rules: list[Rule]) -> Iterator[Finding]:
    """`compose-key` rules: one finding per device request (driver and capabilities together)."""
    reported: set[tuple[str, int]] = set()  # (rule, list item) already reported
    for request in view.requests:
        for rule in rules:
            globs = ComposeKeyParams.of(rule).match.get(request.name, [])
            if any(fnmatch.fnmatchcase(v, g) for v in request.values if v for g in globs):
                if request.item and (rule.code, request.item) in reported:
                    continue
                reported.add((rule.code, request.item))
                message = f"{rule.message or rule.summary} ({request.name}: {', '.join(request.values)})"
                yield view.finding(rule, request.offset, message, request.name)


def _list_value(view: ComposeView, parent: str, entry: Scalar, value: str, item: int, requests: bool) -> None:
    """A scalar list item: `- NAME=value` (environment, args) or `- gpu` (capabilities).
    `requests`: whether it is a device request of its own (a block list's item; a flow
    list's items are matched together at their key)."""
    name, eq, rest = value.partition("=")
    if parent == "environment" and eq:
        view.env.append(EnvName(entry.start + (entry.style in _QUOTED), name, rest))
    elif parent == "args" and eq and name.upper().endswith("IMAGE"):
        view.images.append(Image(entry.start, rest, rest))
    if requests:
        view.requests.append(Request(parent, [value], entry.start, item))


# The kinds a compose file is matched with (porter/rules/kinds.py's Matcher), in the order their
# findings are listed: adding a kind is its matcher and a line.
COMPOSE_KINDS: tuple[Matcher[ComposeView], ...] = (
    Matcher("container-image", image_findings),  # `image:`, an `*IMAGE` build arg
    Matcher("container-env-var", env_findings),  # `environment:`
    Matcher(REQUIREMENT_STRING, index_env_findings),  # `environment: PIP_INDEX_URL=...`
    Matcher("compose-key", request_findings),  # NVIDIA device requests
)


def find_compose(path: str, data: bytes, rules: ActiveRules) -> Found | Skipped | None:
    """Findings (with edits) for one compose file (never raises for bad input)."""
    return text_found(
        path, data, "compose", lambda text: matched(COMPOSE_KINDS, read_compose(path, text, rules), rules)
    )
