"""Third-party package tables: lookups per target, name normalisation and load-time validation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from porter.tables.packages import load_package_table, parse_package_table

TARGETS = ("mlu", "hip")
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
REQUIRED = (
    "torch torchvision torchaudio transformers peft accelerate trl datasets deepspeed flash-attn "
    "bitsandbytes xformers apex vllm triton liger-kernel unsloth auto-gptq autoawq optimum "
    "transformer-engine tensorrt-llm nvidia-ml-py pynvml megatron-core mamba-ssm causal-conv1d "
    "flash-linear-attention torch-npu galore-torch badam adam-mini hqq eetq gptqmodel modelscope "
    "openmind swanlab wandb tensorboard"
).split()


@pytest.mark.parametrize("target", TARGETS)
def test_required_packages_are_covered(target: str) -> None:
    table = load_package_table(target)
    missing = [name for name in REQUIRED if table.by_distribution(name) is None]
    assert missing == []
    for entry in table.entries.values():
        assert entry.reason and entry.source, entry.name
        assert not any(CJK.search(text or "") for text in (entry.reason, entry.suggestion, entry.source))


@pytest.mark.parametrize(
    "target,name,action,replacement,severity",
    [
        pytest.param("mlu", "deepspeed", "replace", "deepspeed-mlu", "warning", id="deepspeed[mlu]"),
        pytest.param("hip", "deepspeed", "keep", None, "info", id="deepspeed[hip]"),
        pytest.param("mlu", "bitsandbytes", "drop", None, "error", id="bitsandbytes[mlu]"),
        pytest.param("hip", "bitsandbytes", "flag", None, "warning", id="bitsandbytes[hip]"),
        pytest.param("mlu", "flash-attn", "flag", None, "warning", id="flash-attn[mlu]"),
        pytest.param("hip", "flash-attn", "flag", None, "warning", id="flash-attn[hip]"),
        pytest.param("mlu", "wandb", "keep", None, "info", id="wandb[mlu]"),
        pytest.param("hip", "torch-npu", "flag", None, "warning", id="torch-npu[hip]"),
    ],
)
def test_by_distribution(target: str, name: str, action: str, replacement: str | None, severity: str) -> None:
    entry = load_package_table(target).by_distribution(name)
    assert (entry.action, entry.replacement, entry.severity) == (action, replacement, severity)


def test_suggestions_say_what_to_do() -> None:
    mlu = load_package_table("mlu")
    assert mlu.by_distribution("bitsandbytes").suggestion.startswith("QLoRA is unavailable on MLU")
    for target in TARGETS:
        assert 'attn_implementation="sdpa"' in load_package_table(target).by_distribution("flash-attn").suggestion
        torch = load_package_table(target).by_distribution("torch")
        assert torch.action == "keep" and torch.strip_local_version


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("spelling", ["flash-attn", "Flash_Attn", "flash.attn", "FLASH-ATTN"])
def test_names_are_normalised(target: str, spelling: str) -> None:
    assert load_package_table(target).by_distribution(spelling).name == "flash-attn"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "name,expected",
    [("cupy-cuda12x", "cupy"), ("CuPy_CUDA11x", "cupy"), ("nvidia-cudnn-cu12", "nvidia-cuda-runtime-cu12")],
)
def test_name_patterns(target: str, name: str, expected: str) -> None:
    assert load_package_table(target).by_distribution(name).name == expected


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "module,expected",
    [
        ("flash_attn.bert_padding", "flash-attn"),
        ("transformer_engine.pytorch", "transformer-engine"),
        ("auto_gptq", "auto-gptq"),
        ("apex.amp", "apex"),
        ("deepspeed.ops.adam", "deepspeed"),
        ("pynvml", "nvidia-ml-py"),
        ("awq", "autoawq"),
        ("numpy", None),
    ],
)
def test_by_import(target: str, module: str, expected: str | None) -> None:
    entry = load_package_table(target).by_import(module)
    assert (entry.name if entry else None) == expected


def test_tables_are_cached() -> None:
    assert load_package_table("mlu") is load_package_table("mlu")


def test_unknown_target() -> None:
    with pytest.raises(ValueError, match="npu"):
        load_package_table("npu")


GOOD = """schema = 1
target = "mlu"

[packages.foo]
action = "keep"
import_names = ["foo"]
reason = "r"
source = "porter"
severity = "info"
"""


@pytest.mark.parametrize(
    "text,key",
    [
        pytest.param(GOOD + 'colour = "red"\n', "packages.foo.colour", id="unknown-key"),
        pytest.param(GOOD.replace('"keep"', '"maybe"'), "packages.foo.action", id="bad-action"),
        pytest.param(GOOD.replace('severity = "info"\n', ""), "packages.foo.severity", id="missing-field"),
        pytest.param(GOOD.replace('"info"', '"fatal"'), "packages.foo.severity", id="bad-severity"),
        pytest.param(GOOD.replace('"keep"', '"replace"'), "packages.foo.replacement", id="replace-without-target"),
        pytest.param(GOOD.replace("packages.foo", "packages.Foo_Bar"), "packages.Foo_Bar", id="not-normalised"),
        pytest.param(GOOD + GOOD.split("\n\n", 1)[1].replace("foo]", "bar]"), "packages.bar.import_names", id="dup-import"),
        pytest.param("oops = 1\n" + GOOD, "oops", id="unknown-top-level"),
        pytest.param(GOOD + "[packages.bad\n", "invalid TOML", id="syntax"),
    ],
)
def test_broken_table_names_file_and_key(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "packages.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_package_table("mlu", path)
    assert str(path) in str(info.value) and key in str(info.value)


def test_good_tmp_table_loads(tmp_path: Path) -> None:
    path = tmp_path / "packages.toml"
    path.write_text(GOOD, encoding="utf-8")
    table = parse_package_table(path, "mlu")
    assert table.by_import("foo.sub").name == "foo"


def test_one_library_finding_per_package_and_file():
    """Ten imports of triton in one kernel file are one thing to act on: one finding at the
    first import, with the count; another package keeps its own finding."""
    from porter.engine.pipeline import check_bytes
    from porter.rules import ActiveRules, load_rules

    source = b"import triton\nimport triton.language as tl\nfrom triton import jit\nimport bitsandbytes as bnb\n"
    found = [f for f in check_bytes("k.py", source, ActiveRules(load_rules("mlu"))).findings if f.rule in ("PRT401", "PRT402")]
    by_package = {f.subject: f for f in found}
    assert len(found) == len(by_package) == 2
    assert by_package["triton"].line == 1 and "(2 more imports of it in this file)" in by_package["triton"].message
    assert by_package["bitsandbytes"].line == 4
