"""Third-party package tables: lookups per target, name normalisation and load-time validation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from porter.tables.packages import load_package_table, parse_package_table

TARGETS = ("mlu", "hip", "npu")
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
        pytest.param("npu", "torch-npu", "keep", None, "info", id="torch-npu[npu]"),
        pytest.param("npu", "deepspeed", "keep", None, "info", id="deepspeed[npu]"),
        pytest.param("npu", "bitsandbytes", "flag", None, "error", id="bitsandbytes[npu]"),
        pytest.param("npu", "flash-attn", "flag", None, "warning", id="flash-attn[npu]"),
        pytest.param("npu", "apex", "flag", None, "warning", id="apex[npu]"),
        pytest.param("npu", "triton", "flag", None, "warning", id="triton[npu]"),
        pytest.param("npu", "vllm", "flag", None, "warning", id="vllm[npu]"),
        pytest.param("npu", "unsloth", "drop", None, "error", id="unsloth[npu]"),
        pytest.param("npu", "torch-mlu", "flag", None, "warning", id="torch-mlu[npu]"),
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
    with pytest.raises(ValueError, match="xpu"):
        load_package_table("xpu")


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
        pytest.param(
            GOOD + GOOD.split("\n\n", 1)[1].replace("foo]", "bar]"), "packages.bar.import_names", id="dup-import"
        ),
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
    """Ten imports of vLLM in one file are one thing to act on: one finding at the first
    import, with the count; another package keeps its own finding."""
    from porter.engine.pipeline import check_bytes
    from porter.rules import ActiveRules, load_rules

    source = b"import vllm\nimport vllm.utils as vu\nfrom vllm import LLM\nimport bitsandbytes as bnb\n"
    found = [
        f
        for f in check_bytes("k.py", source, ActiveRules(load_rules("mlu"))).findings
        if f.rule in ("PRT401", "PRT402")
    ]
    by_package = {f.subject: f for f in found}
    assert len(found) == len(by_package) == 2
    assert by_package["vllm"].line == 1 and "(2 more imports of it in this file)" in by_package["vllm"].message
    assert by_package["bitsandbytes"].line == 4


def test_plain_requirements_read_as_packaging_reads_them():
    """The plain reader (porter/tables/plain_requirement.py) accepts only strings packaging
    accepts, and reads name, extras, specifiers (in order) and URL as packaging does."""
    import random

    from packaging.requirements import InvalidRequirement, Requirement

    from porter.tables.plain_requirement import parse_plain

    names = ["torch", "flash-attn", "flash_attn", "Pillow", "a", "a.b", "-x", "x-", "x y"]
    extras = ["", "[deepspeed]", "[a, b]", "[ a ]", "[]", "[a,]", "[a b]"]
    ops = ["==", "!=", ">=", "<=", ">", "<", "~=", "===", "=", "=>"]
    versions = [
        "1",
        "1.0",
        "2.7.4",
        "1.0a1",
        "1.0rc2",
        "1.0.post1",
        "1.0.dev3",
        "1.0a1.post2.dev3",
        "1.0+cu121",
        "2.7.4.post1+cu12torch2.6cxx11abifalse",
        "1.0.*",
        "1.*",
        "1.0-post1",
        "1.0.POST1",
        "v1.0",
        "1.0a",
        "1.0+CU121",
        "1.0+",
        "",
        "01.0",
        "1.0.0.0.0",
        "1.0b2.dev1",
    ]
    tails = ["", " ; python_version < '3.11'", "; sys_platform == 'linux'", " # note", ",", " "]
    urls = [
        "@ git+https://github.com/org/repo.git@v1",
        "@ https://example.com/x-1.0-py3-none-any.whl",
        "@file:///tmp/x",
        "@ not a url",
        "@",
    ]
    rng = random.Random(5)
    read = 0
    for _ in range(20000):
        name, extra = rng.choice(names), rng.choice(extras)
        if rng.random() < 0.15:
            text = f"{name}{extra} {rng.choice(urls)}{rng.choice(tails)}"
        else:
            clauses = [
                f"{rng.choice(ops)}{rng.choice(['', ' '])}{rng.choice(versions)}" for _ in range(rng.randint(0, 3))
            ]
            text = f"{name}{extra}{rng.choice(['', ' '])}{','.join(clauses)}{rng.choice(tails)}"
        plain = parse_plain(text)
        if plain is None:
            continue
        read += 1
        try:
            req = Requirement(text.strip())
        except InvalidRequirement:
            raise AssertionError(f"read {text!r}, which packaging rejects")
        assert plain.name == req.name and set(plain.extras) == req.extras and plain.url == req.url, text
        assert [(s.operator, s.version) for s in plain.specifier] == [(s.operator, s.version) for s in req.specifier], (
            text
        )
        assert [str(s) for s in plain.specifier] == [str(s) for s in req.specifier], text
        assert req.marker is None, text
    assert read > 1000  # the common forms are read here
    for text in (
        "torch>=2.0,<3",
        "flash-attn==2.7.4.post1+cu12torch2.6cxx11abifalse",
        "fsdp-turbo @ git+https://gitcode.com/Ascend/FSDPTurbo.git@d878dff",
        "deepspeed[autotuning]>=0.10.0",
    ):
        assert parse_plain(text) is not None, text


def test_plain_wheel_names_read_as_packaging_reads_them():
    import random

    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    from porter.tables.plain_requirement import plain_wheel

    names = ["flash_attn", "torch", "Pillow", "a.b", "_x", "x_", "a__b", "flash-attn", "A_B"]
    versions = [
        "2.7.4.post1+cu12torch2.6cxx11abifalse",
        "2.7.4.post1+cu12torch2.6cxx11abiFALSE",
        "2.1.0",
        "1.0rc1",
        "1.0+CU1",
        "1.0-1",
        "v1",
        "2.0.dev1",
        "1",
        "1.0+a_b",
    ]
    builds = ["", "-1", "-1abc", "-x1"]
    tags = [
        "-cp310-cp310-linux_x86_64",
        "-py3-none-any",
        "-cp311-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64",
        "-py3-none",
        "-py2.py3-none-any",
        "-1py-none-any",
        "-py3-none-any.",
    ]
    rng = random.Random(9)
    read = 0
    for _ in range(5000):
        filename = f"{rng.choice(names)}-{rng.choice(versions)}{rng.choice(builds)}{rng.choice(tags)}.whl"
        plain = plain_wheel(filename)
        if plain is None:
            continue
        read += 1
        try:
            name, version, _, _ = parse_wheel_filename(filename)
        except InvalidWheelFilename:
            raise AssertionError(f"read {filename!r}, which packaging rejects")
        assert plain == (name, str(version)), filename
    assert read > 500
