"""Compose files read through PyYAML's parser (porter/filetypes/compose.py): flow style as block
style, exact spans for renames, an alias reported where its anchor is."""

from __future__ import annotations

from porter.engine.pipeline import convert_bytes
from porter.rules import ActiveRules, Selection, load_rules

CODES = ("PRT530", "PRT531", "PRT532", "PRT533", "PRT534")


def _convert(text: str, target: str = "mlu"):
    rules = ActiveRules(load_rules(target), Selection(None, (), extend=CODES))
    return convert_bytes("docker-compose.yml", text.encode(), rules)[1]


def _found(result) -> list[tuple[str, int, int]]:
    return sorted((f.rule, f.line, f.col) for f in result.findings)


BLOCK = """\
services:
  trainer:
    image: nvidia/cuda:12.1.0-base
    environment:
      CUDA_VISIBLE_DEVICES: "0"
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              capabilities: [gpu]
"""
FLOW = """\
services:
  trainer:
    image: nvidia/cuda:12.1.0-base
    environment: {CUDA_VISIBLE_DEVICES: "0"}
    deploy: {resources: {reservations: {devices: [{driver: nvidia, capabilities: [gpu]}]}}}
"""


def test_flow_style_finds_what_block_style_finds():
    block, flow = _convert(BLOCK), _convert(FLOW)
    assert [(f.rule, f.message) for f in sorted(block.findings, key=lambda f: f.line)] == [
        (f.rule, f.message) for f in sorted(flow.findings, key=lambda f: f.line)
    ]
    assert {f.rule for f in flow.findings} == {"PRT530", "PRT531"} and [e.rule for e in flow.edits] == ["PRT533"]
    # the rename replaces the name alone: braces, quotes and the rest of the line stay
    assert flow.new_bytes.decode() == FLOW.replace("CUDA_VISIBLE_DEVICES", "MLU_VISIBLE_DEVICES")


def test_one_device_request_is_one_finding():
    result = _convert(FLOW)
    assert [f.line for f in result.findings if f.rule == "PRT531"] == [5]


def test_an_alias_is_reported_where_its_anchor_is_once():
    text = "x-base: &base nvidia/cuda:12.1.0-base\nservices:\n  a: {image: *base}\n  b:\n    image: *base\n"
    assert _found(_convert(text)) == []  # the anchor is not an image key
    text = "services:\n  a:\n    image: &base nvidia/cuda:12.1.0-base\n  b:\n    image: *base\n"
    assert _found(_convert(text)) == [("PRT530", 3, 12)]


def test_every_document_of_the_stream_is_read():
    text = "services:\n  a: {image: python:3.11}\n---\nservices:\n  b: {runtime: nvidia}\n"
    assert _found(_convert(text)) == [("PRT531", 5, 7)]


def test_yaml_that_does_not_parse_is_copied_unchanged():
    result = _convert("services: {a: {image: nvidia/cuda:12\n")
    assert result.status == "skipped" and "invalid YAML" in result.reason and result.new_bytes is None
