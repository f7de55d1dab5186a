"""The npu package table (op_tables/npu/packages.toml): what each training dependency does on
Ascend, per torch line, read by the same code as mlu's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from porter.filetypes.constraints import derive_constraints
from porter.tables.packages import load_package_table
from porter.tables.torch_pairs import pair_for
from porter.tables.versions import available_versions

LINES = ("2.1", "2.6", "2.7", "2.8")
TORCH_OF_LINE = {"2.1": "2.1.0", "2.6": "2.6.0", "2.7": "2.7.1", "2.8": "2.8.0"}


def test_lines_are_the_op_table_lines() -> None:
    assert tuple(available_versions("npu")) == LINES
    for target in ("mlu", "npu"):
        lines = set(available_versions(target))
        for entry in load_package_table(target).entries.values():
            assert {line for line, _ in entry.releases_by_line} <= lines, entry.name
            assert {line for line, _ in entry.lines} <= lines, entry.name


@pytest.mark.parametrize("line", LINES)
def test_torch_npu_and_torch_name_one_release(line: str) -> None:
    table = load_package_table("npu")
    torch = TORCH_OF_LINE[line]
    assert table.by_distribution("torch").releases(line) == f"=={torch}"
    assert table.by_distribution("torch-npu").releases(line) == f"=={torch}.*"
    assert table.by_distribution("torch_npu").name == "torch-npu"
    pair = pair_for(torch)
    assert table.by_distribution("torchvision").releases(line) == f"=={pair.torchvision}"
    assert table.by_distribution("torchaudio").releases(line) == f"=={pair.torchaudio}"


def test_what_works_on_npu_is_said() -> None:
    table = load_package_table("npu")
    flash = table.by_distribution("flash-attn")
    assert "npu_fusion_attention" in flash.reason and 'attn_implementation="flash_attention_2"' in flash.suggestion
    bnb = table.by_distribution("bitsandbytes")
    assert bnb.action == "flag" and bnb.suggestion.startswith("QLoRA is not available on the NPU")
    assert table.by_distribution("deepspeed").action == "keep"
    assert table.by_distribution("deepspeed").releases("2.8") == ">=0.10.1"
    assert "vllm-ascend" in table.by_distribution("vllm").suggestion
    assert table.by_distribution("vllm-ascend").action == "keep"
    assert "triton-ascend" in table.by_distribution("triton").suggestion
    assert "MindSpeed" in table.by_distribution("megatron-core").suggestion
    assert table.by_import("torch_npu").name == "torch-npu"
    assert table.by_import("triton").name == "triton"  # triton-ascend provides the same module
    assert table.by_distribution("transformers").releases("2.1") == ">=4.32.0,<5.0.0"
    assert table.by_distribution("transformers").releases("2.8") == ">=4.32.0"
    assert table.by_distribution("accelerate").releases("2.1") == ">=0.21.0,<1.16.0"


def test_every_entry_that_names_a_release_cites_a_source() -> None:
    for entry in load_package_table("npu").entries.values():
        text = " ".join(t for t in (entry.reason, entry.suggestion or "") if t)
        sources = " ".join(s for s in (entry.source, entry.releases_source or "") if s)
        assert "shared" not in sources and "FACTS" not in sources, entry.name
        if re.search(r"\b\d+\.\d+\.\d+\b", text) or entry.releases_by_line or entry.releases_any_line:
            assert entry.source != "porter", entry.name


def test_constraints_on_an_npu_line(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text(
        "torch==2.4.0+cu121\ntorchvision\ntransformers>=4.30\naccelerate==0.20.0\nbitsandbytes>=0.39\nunsloth\n"
    )
    rows = {c.name: c for c in derive_constraints(tmp_path, "npu", "2.8")}
    assert rows["torch"].specifier == "==2.8.0" and "PRT421" in rows["torch"].why
    assert rows["torch-npu"].specifier == "==2.8.0.*"
    assert rows["torchvision"].specifier == "==0.23.0"
    assert rows["transformers"].specifier == ">=4.32.0"
    assert rows["accelerate"].specifier == ">=0.21.0"
    assert rows["unsloth"].specifier is None  # dropped: a comment, no constraint
    on_21 = {c.name: c for c in derive_constraints(tmp_path, "npu", "2.1")}
    assert on_21["torch"].specifier == "==2.1.0"
    assert on_21["transformers"].specifier == ">=4.32.0,<5.0.0"
