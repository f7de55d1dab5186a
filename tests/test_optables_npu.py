"""The npu op tables: built from Ascend's lists by the same script as mlu's, read as mlu's are."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from porter.tables.optables import available_versions, load_api_table
from porter.tables.versions import table_versions

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tools" / "vendor_data"
NPU_VERSIONS = ("2.1", "2.6", "2.7", "2.8")


def _builder():
    spec = importlib.util.spec_from_file_location("build_op_tables", REPO / "tools" / "build_op_tables.py")
    module = importlib.util.module_from_spec(spec)
    pytest.importorskip("yaml")
    spec.loader.exec_module(module)
    return module


def _vendor_list(version: str, kind: str) -> set[str]:
    name = f"{kind}_{version.replace('.', '_')}.json"
    return set(json.loads((DATA / "ascend" / name).read_text(encoding="utf-8"))["op_list"])


def test_lines_and_default() -> None:
    assert available_versions("npu") == list(NPU_VERSIONS)
    assert table_versions("npu") == NPU_VERSIONS
    assert load_api_table("npu").version == "2.8"
    assert load_api_table("npu", "2.7.1") is load_api_table("npu", "2.7")
    assert load_api_table("npu", "2.1.0").target == "npu"


@pytest.mark.parametrize("version", NPU_VERSIONS)
def test_counts_match_the_vendor_lists(version: str) -> None:
    supported, unsupported = _vendor_list(version, "supported_op"), _vendor_list(version, "op_list")
    assert not supported & unsupported
    header = json.loads((REPO / "op_tables" / "npu" / f"torch_api_{version}.json").read_text())["counts"]
    assert header == {"supported": len(supported), "partial": 0, "unsupported": len(unsupported)}
    table = load_api_table("npu", version)
    derived = [api for api, e in table.entries.items() if api not in supported | unsupported]
    # one NPU name per supported CUDA API (torch.cuda.*, Tensor.cuda, ...), and nothing else
    assert 70 < len(derived) < 100
    assert all(
        api.startswith(
            ("torch.npu.", "torch.Tensor.", "torch.nn.Module.", "torch.TypedStorage.", "torch.UntypedStorage.")
        )
        for api in derived
    )
    assert table.counts() == {"supported": len(supported) + len(derived), "partial": 0, "unsupported": len(unsupported)}


@pytest.mark.parametrize("version", NPU_VERSIONS)
def test_device_namespace_by_cuda_name_with_npu_counterpart(version: str) -> None:
    table = load_api_table("npu", version)
    cuda = table.lookup("torch.cuda.synchronize")
    assert (cuda.status, cuda.counterpart) == ("supported", "torch.npu.synchronize")
    assert "Ascend/msprobe@e48638562554" in cuda.source and "pytorch_2-7-1/torch-cuda.md" in cuda.source
    npu = table.lookup("torch.npu.synchronize")
    assert npu.status == "supported" and "torch.cuda.synchronize" in npu.note and "Ascend/pytorch" in npu.source
    assert table.lookup("torch.cuda.amp.GradScaler").counterpart == "torch.npu.amp.GradScaler"
    assert table.lookup("torch.npu.amp.autocast").status == "supported"
    assert table.lookup("torch.cuda.CUDAGraph").counterpart == "torch.npu.NPUGraph"
    assert table.lookup("torch.npu.NPUGraph.replay").status == "supported"
    assert table.tensor_method("cuda").counterpart == "torch.Tensor.npu"
    assert table.tensor_method("is_cuda").counterpart == "torch.Tensor.is_npu"
    assert table.tensor_method("npu").status == "supported"
    assert table.module_method("npu").status == "supported"
    # Accepted as they are: no NPU name (Ascend's reference gives none).
    assert table.lookup("torch.backends.cudnn.allow_tf32").counterpart is None
    # Unsupported CUDA APIs get no NPU name, so nothing suggests one that does not work.
    for api in ("torch.cuda.memory_usage", "torch.cuda.get_device_capability", "torch.backends.cuda.sdp_kernel"):
        entry = table.lookup(api)
        assert (entry.status, entry.counterpart, entry.doubtful) == ("unsupported", None, False), api
    assert table.lookup("torch.npu.memory_usage").status == "unknown"


def test_known_statuses() -> None:
    table = load_api_table("npu", "2.8")
    assert table.lookup("torch.nn.Linear").status == "supported"
    assert table.lookup("torch.nn.functional.softmax").status == "supported"
    assert table.lookup("torch.distributed.init_process_group").status == "supported"
    # Not in either list: unknown, never a guess.
    assert table.lookup("torch.nn.functional.scaled_dot_product_attention").status == "unknown"
    assert table.lookup("torch.nn.DataParallel").status == "unsupported"
    assert table.lookup("torch.nn.RNN").status == "unsupported"
    assert table.lookup("torch.not_an_api").status == "unknown"
    # Doubtful `false`s: Ascend's own reference lists MaxPool2d as supported; Adam.step is host code.
    pool = table.lookup("torch.nn.MaxPool2d")
    assert pool.status == "unsupported" and pool.doubtful and "API reference" in pool.note
    step = table.lookup("torch.optim.Adam.step")
    assert step.status == "unsupported" and step.doubtful and "host code" in step.note
    assert table.lookup("torch.optim.Adam").status == "supported"


def test_versions_differ_where_the_data_does() -> None:
    by_line = {v: load_api_table("npu", v) for v in NPU_VERSIONS}
    assert [by_line[v].lookup("torch.unique_consecutive").status for v in NPU_VERSIONS] == [
        "unsupported",
        "unsupported",
        "supported",
        "unsupported",
    ]
    assert by_line["2.1"].lookup("torch.compile").status == "supported"
    assert by_line["2.8"].lookup("torch.compile").status == "unsupported"


@pytest.mark.parametrize("version", NPU_VERSIONS)
def test_only_unsupported_entries_are_doubtful_and_only_supported_ones_have_npu_names(version: str) -> None:
    table = load_api_table("npu", version)
    entries = list(table.entries.values())
    assert [e.api for e in entries if e.doubtful and e.status != "unsupported"] == []
    assert [e.api for e in entries if e.counterpart and e.status != "supported"] == []
    assert all(e.source and "shared" not in e.source for e in entries)


def test_reader_takes_conflicts_as_unsupported_and_rejects_values(tmp_path: Path) -> None:
    builder = _builder()
    (tmp_path / "supported_op_9_9.json").write_text('{"op_list": {"torch.a": "", "torch.b": ""}}')
    (tmp_path / "op_list_9_9.json").write_text('{"op_list": {"torch.b": "", "torch.c": ""}}')
    read = builder.read_ascend(sorted(tmp_path.glob("*.json")))
    assert {api: e["supported"] for api, e in read.items()} == {"torch.a": True, "torch.b": False, "torch.c": False}
    assert read["torch.b"]["conflict"] and not read["torch.a"]["limited"]
    (tmp_path / "op_list_9_9.json").write_text('{"op_list": {"torch.c": "a sentence"}}')
    with pytest.raises(SystemExit, match="torch.c"):
        builder.read_ascend(sorted(tmp_path.glob("*.json")))


def test_table_source_names_both_files() -> None:
    source = json.loads((REPO / "op_tables" / "npu" / "torch_api_2.8.json").read_text())["source"]
    assert source["repo"] == "Ascend/msprobe" and source["commit"].startswith("e4863856")
    assert [f["file"] for f in source["files"]] == ["ascend/op_list_2_8.json", "ascend/supported_op_2_8.json"]
