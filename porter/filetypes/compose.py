"""Compose files (docker-compose*.yml, compose*.yaml): NVIDIA device requests, CUDA base
images and environment names, with the container rules of porter/files/docker.py.

Read with a small indentation scanner of keys (no YAML library: the edits are exact spans
anyway). This module claims compose files before the YAML config handler sees them.
"""

from __future__ import annotations

import fnmatch
import re

from porter.filetypes.docker import Context, container_finder
from porter.filetypes.requirements import BrokenFile
from porter.core.model import Finding

_COMPOSE_KEY = re.compile(r"""(?:"([^"\n]*)"|'([^'\n]*)'|([^\s#'"{\[\-][^:#]*?|-[^\s:#][^:#]*?))[ \t]*:(?=[ \t]|$)""")
_BLOCK_SCALAR = re.compile(r"[|>][-+0-9]*")
_TRAILING_COMMENT = re.compile(r"[ \t]+#.*$")
_PROPERTIES = re.compile(r"^(?:[&!]\S*\s*)+")  # anchors and tags before a value


def compose_findings(ctx: Context) -> list[Finding]:
    """Findings (and exact environment renames) for one compose file.

    The scanner follows keys by indentation (a list may sit at its key's own indentation,
    as compose files often write `devices:` then `- driver: nvidia`), skips block scalars
    and multi-line flow collections, and raises BrokenFile on what cannot be YAML.
    """
    index = ctx.index
    stack: list[tuple[int, str, bool, int]] = []  # (indent, key, opens a block, list item's line)
    items: dict[int, int] = {}  # content indent of a list item -> the item's line
    block, flow = -1, 0
    for number in range(1, len(index.starts) + 1):
        line = index.line_text(number)
        indent = len(line) - len(line.lstrip(" "))
        content = line[indent:]
        if block >= 0 and (indent > block or not content.strip()):
            continue
        block = -1
        if flow:
            flow += _depth(content)
            continue
        if not content.strip() or content.startswith("#") or content.rstrip() in ("---", "..."):
            continue
        if content.startswith("\t"):
            raise BrokenFile(f"invalid YAML: a tab indents line {number}")
        col, item = indent, None
        while content.startswith("- ") or content.rstrip() == "-":
            while stack and (stack[-1][0] > col or (stack[-1][0] == col and not stack[-1][2])):
                stack.pop()
            item = number
            step = len(content) - len(content[1:].lstrip(" "))
            col, content = col + step, content[step:]
            items = {k: v for k, v in items.items() if k < col} | {col: number}
        key = _COMPOSE_KEY.match(content)
        parent = stack[-1] if stack else (-1, "", True, 0)
        at = index.starts[number - 1] + col
        if key is None:
            if item is None and indent <= parent[0]:
                raise BrokenFile(f"invalid YAML: line {number} is not a key, a list item or a continuation")
            if item is not None:
                _list_value(ctx, parent, at, _TRAILING_COMMENT.sub("", content).strip())
            continue
        while stack and stack[-1][0] >= col:
            stack.pop()
        parent = stack[-1] if stack else (-1, "", True, 0)
        name = next(g for g in key.groups() if g is not None)
        raw = _TRAILING_COMMENT.sub("", content[key.end():]).strip()
        bare = _PROPERTIES.sub("", raw)
        if bare.startswith(("\"", "'")) and (len(bare) < 2 or bare[-1] != bare[0]):
            raise BrokenFile(f"invalid YAML: unclosed quote on line {number}")
        stack.append((col, name, not bare, items.get(col, 0)))
        block = col if _BLOCK_SCALAR.fullmatch(bare) else -1
        flow = max(_depth(bare), 0) if bare.startswith(("[", "{")) else 0
        name_at = at + (1 if key.group(3) is None else 0)
        value_at = at + content.find(raw, key.end()) if raw else at
        _compose_key(ctx, parent[1], name, bare.strip("\"'"), name_at, value_at, stack[-1][3])
    if flow:
        raise BrokenFile("invalid YAML: a [ or { is never closed")
    return ctx.findings


def _depth(text: str) -> int:
    text = _TRAILING_COMMENT.sub("", text)
    return text.count("[") + text.count("{") - text.count("]") - text.count("}")


def _compose_key(ctx: Context, parent: str, name: str, value: str, name_at: int, value_at: int, item: int) -> None:
    if value and (name == "image" or (parent == "args" and name.upper().endswith("IMAGE"))):
        ctx.image(value_at, value, value)
    if parent == "environment":
        ctx.env_name(name_at, name, value)
    values = [v.strip(" \"'") for v in value.strip("[]").split(",")] if value.startswith("[") else [value]
    _device_request(ctx, name, values, name_at, item)


def _device_request(ctx: Context, name: str, values: list[str], at: int, item: int) -> None:
    """`compose-key` rules: one finding per device request (driver and capabilities together)."""
    for rule in ctx.keys:
        globs = rule.params["match"].get(name, [])
        if any(fnmatch.fnmatchcase(v, g) for v in values if v for g in globs):
            if item and (rule.code, item) in ctx.reported:
                continue
            ctx.reported.add((rule.code, item))
            ctx.add(rule, at, f"{rule.message or rule.summary} ({name}: {', '.join(values)})", name)


def _list_value(ctx: Context, parent: tuple[int, str, bool, int], at: int, value: str) -> None:
    """A scalar list item: `- NAME=value` (environment, args) or `- gpu` (capabilities)."""
    plain = value.strip("\"'")
    name, eq, rest = plain.partition("=")
    if parent[1] == "environment" and eq:
        ctx.env_name(at + (1 if plain != value else 0), name, rest)
    elif parent[1] == "args" and eq and name.upper().endswith("IMAGE"):
        ctx.image(at, rest, rest)
    _device_request(ctx, parent[1], [plain], at, parent[3])





find_compose = container_finder("compose", compose_findings)
