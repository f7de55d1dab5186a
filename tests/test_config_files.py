"""Shell scripts, YAML/JSON configs and notebooks: broken input, byte-exact output, layout kept."""

from __future__ import annotations

import json

import pytest

from porter.converter.run import run_convert
from porter.run_options import RunOptions
from porter.engine.pipeline import convert_bytes
from porter.engine.registry import type_for
from porter.rules import ActiveRules, Selection, load_rules


def _run(name: str, data: bytes, target: str = "mlu", select: tuple[str, ...] = ()):
    return convert_bytes(name, data, ActiveRules(load_rules(target), Selection(extend=select)))


def _out(name: str, data: bytes, target: str = "mlu") -> bytes:
    _, result = _run(name, data, target)
    assert result.status in ("changed", "unchanged"), result.reason
    out = result.new_bytes if result.new_bytes is not None else data
    _, again = _run(name, out, target)
    assert not again.edits, "not idempotent"
    return out


BROKEN = [
    pytest.param("train.yaml", b"model_name_or_path: x\nquantization_bit: [4\n", "invalid YAML", id="invalid-yaml"),
    pytest.param(
        "ds_z3_config.json",
        b'{"zero_optimization": {"stage": 3},\n "bf16": {"enabled": tr',
        "invalid JSON",
        id="truncated-json",
    ),
    pytest.param("run.sh", b"\x7fELF\x02\x01\x01\0\0\0CUDA_VISIBLE_DEVICES", "binary", id="binary-sh"),
    pytest.param("run.sh", b"export CUDA_VISIBLE_DEVICES=0\necho \xff\xfe\n", "not UTF-8", id="undecodable-sh"),
    pytest.param("train.yaml", b"model_name_or_path: caf\xe9\nddp_backend: nccl\n", "not UTF-8", id="undecodable-yaml"),
    pytest.param(
        "run.sh", b"if [ -n x ]; then\n  CUDA_VISIBLE_DEVICES=0 python a.py\n", "does not parse", id="unterminated-if"
    ),
    pytest.param(
        "demo.ipynb", b'{"cells": [{"cell_type": "code", "source": ["x.cuda()"', "invalid JSON", id="truncated-notebook"
    ),
    pytest.param("demo.ipynb", b'{"worksheets": [], "nbformat": 3}', "nbformat 4", id="nbformat-3"),
]


@pytest.mark.parametrize(("name", "data", "reason"), BROKEN)
def test_broken_input_is_skipped_with_a_reason(name, data, reason):
    _, result = _run(name, data)
    assert result.status == "skipped"
    assert reason in result.reason
    assert result.new_bytes is None


def test_json_lines_named_json_are_data():
    """A dataset of one JSON record per line, named .json (gorilla's apibench), is data: left
    as it is and not reported, whatever keys its records hold; a broken file still is."""
    records = b'{"ddp_backend": "nccl", "api": "torch.cuda"}\n{"ddp_backend": "nccl"}\n\n'
    _, result = _run("train_eval.json", records)
    assert result.status == "unchanged" and not result.findings and result.reason is None
    _, result = _run("train_eval.json", records + b'{"ddp_backend": \n')
    assert result.status == "skipped" and "invalid JSON" in result.reason


@pytest.mark.parametrize("name", ["data.json", "notes.yaml"])
def test_files_without_a_config_key_are_not_decoded(name):
    """The config screen runs on the bytes: a data file named like a config and holding no
    key any rule looks at is unchanged, even when it is not UTF-8 (porter has nothing to do
    there); with such a key, undecodable bytes are reported."""
    plain = (
        '{"text": "caf\u00e9 au lait"}'.encode("latin-1")
        if name.endswith(".json")
        else "text: caf\u00e9\n".encode("latin-1")
    )
    _, result = _run(name, plain)
    assert result.status == "unchanged" and not result.findings
    keyed = plain.replace(b"text", b"ddp_backend")
    _, result = _run(name, keyed)
    assert result.status == "skipped" and "not UTF-8" in result.reason


def test_broken_files_are_reported_and_copied(tmp_path):
    src = tmp_path / "repo"
    src.mkdir()
    for i, (name, data, _) in enumerate(p.values for p in BROKEN):
        (src / f"{i}_{name}").write_bytes(data)
    done = run_convert(src, RunOptions(target="mlu", out=tmp_path / "out"))
    report, out = done.report, done.out
    statuses = {f["path"]: (f["status"], f.get("reason", "")) for f in report["files"]}
    for i, (name, data, reason) in enumerate(p.values for p in BROKEN):
        assert (out / f"{i}_{name}").read_bytes() == data
        status, why = statuses[f"{i}_{name}"]
        assert status == "skipped" and reason in why


def test_yaml_keeps_comments_quoting_and_order():
    data = (
        b"# fine-tuning recipe\n"
        b"model_name_or_path: 'org/model'   # the base\n"
        b'flash_attn: "fa2"  # fastest on A100\n'
        b"device:    cuda\n"
        b"bf16: true\n"
        b"ddp_backend: nccl\n"
    )
    assert _out("recipe.yaml", data) == (
        b"# fine-tuning recipe\n"
        b"model_name_or_path: 'org/model'   # the base\n"
        b'flash_attn: "sdpa"  # fastest on A100\n'
        b"device:    mlu\n"
        b"bf16: true\n"
        b"ddp_backend: cncl\n"
    )


def test_yaml_crlf_and_bom_kept():
    data = b"\xef\xbb\xbfcompute_environment: LOCAL_MACHINE\r\ndistributed_type: MULTI_GPU\r\nnum_processes: 2\r\n"
    assert _out("accelerate.yaml", data) == data.replace(b"MULTI_GPU", b"MULTI_MLU")


def test_shell_crlf_kept():
    data = b"#!/bin/bash\r\nexport CUDA_VISIBLE_DEVICES=0\r\npython train.py\r\n"
    assert _out("run.sh", data) == data.replace(b"CUDA_", b"MLU_")


def test_non_training_configs_untouched():
    workflow = _run("workflow.yml", b"on: push\nenv:\n  device: cuda\n  bf16: true\njobs: {}\n")[1]
    assert workflow.findings == () and workflow.new_bytes is None
    assert _run("data.json", b'[{"device": "cuda", "bf16": {"enabled": true}}]')[1].findings == ()
    assert _run("config.json", b'{"torch_dtype": "bfloat16", "bf16": {"enabled": true}}')[1].findings == ()


def test_compose_files_are_not_yaml_configs():
    kind = type_for("docker-compose.yml", b"services: {}").name
    assert kind != "yaml"


def test_deepspeed_json_layout_kept_and_findings_only():
    data = (
        b'{\n    "train_batch_size": 8,\n    "bf16": { "enabled" : true },\n    "zero_optimization": {"stage": 3}\n}\n'
    )
    _, result = _run("ds.json", data)
    assert result.new_bytes is None and result.findings == ()  # PRT520 is a note: shown when selected
    _, result = _run("ds.json", data, select=("PRT520",))
    assert [(f.rule, f.line) for f in result.findings] == [("PRT520", 3)]


def test_shebang_detection():
    assert type_for("scripts/launch", b"#!/usr/bin/env bash\necho hi\n").name == "shell"
    assert type_for("scripts/launch", b"#!/bin/sh\necho hi\n").name == "shell"
    assert type_for("scripts/launch", b"#!/usr/bin/env python3\nprint(1)\n").name == "python"


def test_python_snippet_import_goes_after_import_torch():
    data = b"#!/bin/bash\nN=$(python -c 'import torch, os; print(torch.cuda.device_count())')\n"
    assert _out("count.sh", data) == (
        b"#!/bin/bash\nN=$(python -c 'import torch, os; import torch_mlu; print(torch.mlu.device_count())')\n"
    )


def _notebook(cells: list, **extra) -> dict:
    return {
        "cells": cells,
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}, **extra},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _code(source, outputs=()):
    return {
        "cell_type": "code",
        "execution_count": 3,
        "metadata": {"collapsed": False},
        "outputs": list(outputs),
        "source": source,
    }


OUTPUT = {
    "output_type": "execute_result",
    "execution_count": 3,
    "metadata": {},
    "data": {"text/plain": ["device(type='cuda', index=0)"]},
}


def test_notebook_outputs_metadata_and_layout_untouched():
    nb = _notebook(
        [
            {"cell_type": "markdown", "metadata": {}, "source": ["Run `x.cuda()` on CUDA_VISIBLE_DEVICES=0"]},
            _code(["import torch\n", "x = torch.ones(2).cuda()\n", "x.device"], [OUTPUT]),
            _code("%env CUDA_VISIBLE_DEVICES=1\ny = torch.zeros(1, device='cuda')"),
        ],
        widgets={"state": {"cuda": 1}},
    )
    data = (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode()
    out = _out("demo.ipynb", data)
    before, after = json.loads(data), json.loads(out)
    assert after["metadata"] == before["metadata"]
    for old, new in zip(before["cells"], after["cells"]):
        assert {k: v for k, v in old.items() if k != "source"} == {k: v for k, v in new.items() if k != "source"}
    assert after["cells"][0] == before["cells"][0]
    assert after["cells"][1]["source"] == [
        "import torch\n",
        "import torch_mlu  # noqa: F401\n",
        "x = torch.ones(2).mlu()\n",
        "x.device",
    ]
    assert after["cells"][2]["source"] == "%env MLU_VISIBLE_DEVICES=1\ny = torch.zeros(1, device='mlu')"
    # Only the source lines differ; everything else is the original text.
    changed = [line for line in out.decode().splitlines() if line not in data.decode().splitlines()]
    assert changed == [
        '    "import torch_mlu  # noqa: F401\\n",',
        '    "x = torch.ones(2).mlu()\\n",',
        '   "source": "%env MLU_VISIBLE_DEVICES=1\\ny = torch.zeros(1, device=\'mlu\')"',
    ]


def test_notebook_cell_source_as_one_string_stays_one_string():
    """nbformat allows a cell's source as one string; an edit that adds a line keeps it one
    (it once became two strings without a list: invalid JSON)."""
    cells = [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": src}
        for src in ("import torch\n", "x = 1\n", "y = torch.zeros(2).cuda()\n")
    ]
    data = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1).encode()
    _, result = convert_bytes("a.ipynb", data, ActiveRules(load_rules("mlu")))
    assert result.status == "changed", result.reason
    sources = [c["source"] for c in json.loads(result.new_bytes)["cells"]]
    assert sources == ["import torch\nimport torch_mlu  # noqa: F401\n", "x = 1\n", "y = torch.zeros(2).mlu()\n"]


def test_notebook_keeps_escape_style_and_crlf():
    nb = _notebook([_code(["# r\u00e9sum\u00e9\n", "import torch\n", "torch.cuda.synchronize()"])])
    data = json.dumps(nb, indent=2, ensure_ascii=True).replace("\n", "\r\n").encode()
    out = _out("escaped.ipynb", data).decode()
    assert "r\\u00e9sum\\u00e9" in out and "\u00e9" not in out
    assert '"torch.mlu.synchronize()"' in out and '"import torch_mlu  # noqa: F401\\n",\r\n        "torch' in out
    assert out.count("\r\n") == data.decode().count("\r\n") + 1  # one inserted element, same line endings


def test_notebook_cells_that_are_not_python_are_left_alone():
    nb = _notebook([_code(["model?\n"]), _code(["%%html\n", "<b>cuda</b>"]), _code(["x = y.cuda()"])])
    data = json.dumps(nb, indent=1).encode()
    out = json.loads(_out("mixed.ipynb", data))
    assert [c["source"] for c in out["cells"]] == [["model?\n"], ["%%html\n", "<b>cuda</b>"], ["x = y.mlu()"]]


def test_notebook_in_another_language_untouched():
    nb = {
        "cells": [_code(["x <- cuda()"])],
        "metadata": {"language_info": {"name": "R"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    _, result = _run("r.ipynb", json.dumps(nb).encode())
    assert result.status == "unchanged" and not result.findings


def test_hip_keeps_names_and_reports():
    data = b"#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 torchrun --nproc_per_node 1 train.py --flash_attn fa2\n"
    _, result = _run("train.sh", data, "hip", ("ALL",))
    assert result.new_bytes is None
    assert sorted(f.rule for f in result.findings) == ["PRT501", "PRT507", "PRT511"]


def test_notebook_shell_lines_and_cells():
    nb = _notebook(
        [
            _code(
                [
                    'doc = """\n',
                    "!CUDA_VISIBLE_DEVICES=1 python kept.py\n",
                    '"""\n',
                    "!CUDA_VISIBLE_DEVICES=1 python run.py",
                ]
            ),
            _code(["%%bash\n", "export CUDA_VISIBLE_DEVICES=0\n", "echo CUDA_VISIBLE_DEVICES\n", "nvidia-smi"]),
        ]
    )
    _, result = _run("shell.ipynb", json.dumps(nb, indent=1).encode())
    out = json.loads(result.new_bytes)
    assert out["cells"][0]["source"][1] == "!CUDA_VISIBLE_DEVICES=1 python kept.py\n"  # inside a string: text
    assert out["cells"][0]["source"][3] == "!MLU_VISIBLE_DEVICES=1 python run.py"
    assert out["cells"][1]["source"][1:3] == ["export MLU_VISIBLE_DEVICES=0\n", "echo CUDA_VISIBLE_DEVICES\n"]
    assert [f.rule for f in result.findings] == ["PRT503"]


def test_yaml_marks_count_characters_with_either_loader():
    """Span edits need character offsets; libyaml and PyYAML must agree on non-ASCII text."""
    import yaml

    text = 'a: 1\n# 中文注释 ü\nb: "ü中"\nc: fa2  # 注释\n'
    loaders = [yaml.SafeLoader] + ([yaml.CSafeLoader] if getattr(yaml, "__with_libyaml__", False) else [])
    marks = []
    for loader in loaders:
        node = yaml.compose(text, Loader=loader)
        marks.append([(v.start_mark.index, v.end_mark.index) for _, v in node.value])
    assert all(m == marks[0] for m in marks)
    assert text[marks[0][2][0] : marks[0][2][1]] == "fa2"


def test_the_config_screen_looks_for_keys_written_as_keys():
    """A rule's key counts only where it is written as a key (YAML `device:`, `'device' :`,
    `{device: x}`, JSON `"device":`), not inside a longer key or in a value: such a file is
    not even decoded (undecodable bytes show it)."""
    from porter.filetypes._config_rules import key_screen
    from porter.rules import load_rules

    rules = load_rules("mlu").of_kind("config-key")
    yaml_screen, json_screen = key_screen(rules, quoted=False), key_screen(rules, quoted=True)
    for text in (b"device: cuda", b"  'device' : cuda", b"x: {device: cuda}", b'"device":\n  cuda', b"- ddp_backend:"):
        assert yaml_screen.search(text), text
    for text in (b"per_device_train_batch_size: 2", b"name: device", b"devices: [0]", b"my-device: 1"):
        assert not yaml_screen.search(text), text
    assert json_screen.search(b'{"device" : "cuda"}') and not json_screen.search(b'{"per_device": "device"}')
    _, result = _run("train.yaml", b"model_name_or_path: caf\xe9\nper_device_train_batch_size: 2\n")
    assert result.status == "unchanged" and not result.findings
