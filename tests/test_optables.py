"""Torch API support tables: the build is reproducible and the tables say what the data says."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from porter.core import datafiles
from porter.tables.optables import available_versions, load_api_table

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tools" / "vendor_data"  # tools/import_vendor_data.py brings it in
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
MLU_VERSIONS = ("2.1", "2.4")
NPU_VERSIONS = ("2.1", "2.6", "2.7", "2.8")
BUILT = {"mlu": MLU_VERSIONS, "npu": NPU_VERSIONS}


def _builder():
    pytest.importorskip("yaml")
    if not (DATA / "torch_mlu").is_dir():
        pytest.skip(f"vendor data not present at {DATA}")
    spec = importlib.util.spec_from_file_location("build_op_tables", REPO / "tools" / "build_op_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build_into(builder, out: Path) -> dict[str, bytes]:
    builder.build(DATA, out, REPO / "tools" / "op_notes.toml")
    return {f"{p.parent.name}/{p.name}": p.read_bytes() for p in sorted(out.glob("*/*.json"))}


def test_build_is_deterministic_and_committed_tables_are_fresh(tmp_path: Path) -> None:
    builder = _builder()
    first = _build_into(builder, tmp_path / "a")
    second = _build_into(builder, tmp_path / "b")
    assert first == second
    assert sorted(first) == sorted(f"{t}/torch_api_{v}.json" for t, versions in BUILT.items() for v in versions)
    committed = {
        f"{t}/{p.name}": p.read_bytes()
        for t in BUILT
        for p in sorted((REPO / "op_tables" / t).glob("torch_api_*.json"))
    }
    # A stale table (data or notes changed, table not rebuilt) fails here:
    # run `python tools/build_op_tables.py` and commit the result.
    assert committed == first


@pytest.mark.parametrize(
    "edit,message",
    [
        pytest.param(lambda t: re.sub(r'^"torch.topk" = .*\n', "", t, flags=re.M), "torch.topk", id="missing-note"),
        pytest.param(lambda t: t.replace("[notes]\n", '[notes]\n"torch.add" = "x"\n'), "torch.add", id="stale-note"),
        pytest.param(
            lambda t: t.replace("[host_forms]\n", '[host_forms]\n"torch.add" = { when = ["arg:dtype"], note = "x" }\n'),
            "host_forms torch.add",
            id="stale-host-form",
        ),
        # npu: a counterpart for an API no line supports, a prefix rule that meets nothing, and a
        # doubtful pattern that matches no unsupported API fail the same way, naming [npu].
        pytest.param(
            lambda t: t.replace(
                "[npu.counterparts]\n", '[npu.counterparts]\n"torch.cuda.memory_usage" = { to = "x", source = "s" }\n'
            ),
            r"\[npu\].*counterparts torch.cuda.memory_usage",
            id="npu-counterpart-of-unsupported",
        ),
        pytest.param(
            lambda t: t.replace(
                "[npu.counterpart_prefixes]\n",
                '[npu.counterpart_prefixes]\n"torch.nope." = { to = "x.", source = "s" }\n',
            ),
            "counterpart_prefixes torch.nope.",
            id="npu-stale-prefix",
        ),
        pytest.param(
            lambda t: t.replace('"torch.nn.MaxPool2d",\n', '"torch.nn.MaxPool2d",\n    "torch.add",\n', 1),
            "reference torch.add",
            id="npu-stale-reference",
        ),
    ],
)
def test_build_rejects_missing_and_stale_notes(tmp_path: Path, edit, message: str) -> None:
    builder = _builder()
    notes = tmp_path / "op_notes.toml"
    notes.write_text(edit((REPO / "tools" / "op_notes.toml").read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(SystemExit, match=message):
        builder.build(DATA, tmp_path / "out", notes)


@pytest.mark.parametrize("version", MLU_VERSIONS)
def test_counts_match_the_vendor_list(version: str) -> None:
    builder = _builder()
    vendor = builder.read_vendor(DATA / "torch_mlu" / f"torch_api.r{version}_develop.yaml")
    limited = sum(1 for e in vendor.values() if e["supported"] and e["limited"])
    header = json.loads((REPO / "op_tables" / "mlu" / f"torch_api_{version}.json").read_text())["counts"]
    counts = load_api_table("mlu", version).counts()
    print(f"mlu {version}: vendor entries {header}, with derived MLU names {counts}, limited={limited}")
    assert len(vendor) > 3000
    assert header["partial"] == limited
    assert sum(header.values()) == len(vendor)
    assert counts["partial"] == header["partial"]  # derived MLU names are never partial
    assert 50 < sum(counts.values()) - len(vendor) < 200  # one per vendor counterpart


def test_versions_and_default() -> None:
    assert available_versions("mlu") == list(MLU_VERSIONS)
    assert load_api_table("mlu").version == "2.4"
    assert load_api_table("mlu", "2.1.0") is load_api_table("mlu", "2.1")


def test_unknown_version_and_target_are_errors() -> None:
    with pytest.raises(ValueError, match=r"2\.1, 2\.4"):
        load_api_table("mlu", "2.2")
    with pytest.raises(ValueError, match=r"2\.1, 2\.6, 2\.7, 2\.8"):
        load_api_table("npu", "2.4")
    with pytest.raises(ValueError, match="hip, mlu, npu"):
        load_api_table("xpu")


@pytest.mark.parametrize("version", MLU_VERSIONS)
def test_sdpa_is_partial_in_both_versions(version: str) -> None:
    entry = load_api_table("mlu", version).lookup("torch.nn.functional.scaled_dot_product_attention")
    print(version, entry)
    assert entry.status == "partial"
    assert "256" in entry.note and "MLU300" in entry.note


@pytest.mark.parametrize("version", MLU_VERSIONS)
def test_device_namespace_is_listed_by_cuda_name_with_mlu_counterpart(version: str) -> None:
    table = load_api_table("mlu", version)
    cuda = table.lookup("torch.cuda.synchronize")
    assert (cuda.status, cuda.counterpart) == ("supported", "torch.mlu.synchronize")
    mlu = table.lookup("torch.mlu.synchronize")
    assert mlu.status == "supported" and "torch.cuda.synchronize" in mlu.note
    amp = table.lookup("torch.cuda.amp.autocast")
    assert (amp.status, amp.counterpart) == ("partial", "torch.mlu.amp.autocast")
    assert table.lookup("torch.cuda.CUDAGraph").counterpart == "torch.mlu.MLUGraph"
    assert table.lookup("torch.backends.cudnn.allow_tf32").counterpart == "torch.backends.cnnl.allow_tf32"


def test_versions_differ_where_the_data_does() -> None:
    old, new = load_api_table("mlu", "2.1"), load_api_table("mlu", "2.4")
    assert old.lookup("torch.cuda.memory_snapshot").status == "unsupported"
    assert new.lookup("torch.cuda.memory_snapshot").status == "supported"
    assert old.lookup("CUDA_VISIBLE_DEVICES").counterpart == "MLU_VISIBLE_DEVICES"
    assert new.lookup("CUDA_VISIBLE_DEVICES").status == "unknown"  # r2.4 lists no env vars
    assert "foreach=True" in old.lookup("torch.optim.Adam").note
    assert "MLUGraph" in new.lookup("torch.optim.Adam").note


def test_overrides_and_conflicts_carry_notes() -> None:
    table = load_api_table("mlu", "2.4")
    step = table.lookup("torch.optim.Adam.step")
    assert step.status == "unsupported" and "vendor list" in step.note
    assert table.module_method("named_parameters").status == "unsupported"
    assert "vendor list" in table.module_method("named_parameters").note
    coalesce = table.tensor_method("coalesce")
    assert coalesce.status == "unsupported" and "twice" in coalesce.note


@pytest.mark.parametrize("version", ["2.1", "2.4"])
def test_only_unsupported_entries_are_doubtful(version: str) -> None:
    """A doubtful pattern (a glob such as torch.nn.utils.parametrizations.*, or an API that only
    one version marks unsupported) also meets entries the vendor supports: those keep their
    status and carry no note saying the vendor marks them unsupported."""
    table = load_api_table("mlu", version)
    marked = [api for api, e in table.entries.items() if e.doubtful and e.status != "unsupported"]
    assert marked == []
    if version == "2.4":  # supported in r2.4, and under a doubtful glob / doubtful in r2.1
        for api in ("torch.nn.utils.parametrizations.weight_norm", "torch.distributed.is_torchelastic_launched"):
            assert table.lookup(api).status == "supported" and not table.lookup(api).note


def test_tensor_and_module_methods() -> None:
    table = load_api_table("mlu")
    assert table.tensor_method("cuda").counterpart == "torch.Tensor.mlu"
    assert table.tensor_method("mlu").status == "supported"
    assert table.tensor_method("add_").status == "supported"
    assert table.tensor_method("no_such_method") is None
    assert table.module_method("mlu").status == "supported"
    assert table.module_method("zero_grad").status == "supported"


def test_unknown_api_is_unknown() -> None:
    for target in ("mlu", "hip", "npu"):
        entry = load_api_table(target).lookup("torch.not_an_api")
        assert entry.status == "unknown" and entry.matched is None


def test_hip_prefixes_exact_wins_longest_prefix() -> None:
    assert available_versions("hip") == ["any"]
    table = load_api_table("hip", "2.4")
    assert table is load_api_table("hip")
    assert table.lookup("torch.cuda.synchronize").matched == "torch.cuda.*"
    assert table.lookup("torch.cuda.is_bf16_supported").status == "partial"
    assert table.lookup("torch.cuda.nvtx.range_push").matched == "torch.cuda.nvtx.*"
    assert table.lookup("torch.cuda.get_device_capability").status == "partial"
    assert table.lookup("torch.version.cuda").status == "partial"
    assert table.lookup("torch.backends.cudnn.benchmark").status == "supported"
    assert table.lookup("torch.cuda").status == "unknown"  # a prefix covers names below it only
    assert all(e.source for e in [*table.entries.values(), *table.prefixes.values()])


@pytest.mark.parametrize(
    "target,version", [(t, v) for t, versions in BUILT.items() for v in versions] + [("hip", None)]
)
def test_notes_are_present_and_english(target: str, version: str | None) -> None:
    table = load_api_table(target, version)
    for entry in [*table.entries.values(), *table.prefixes.values()]:
        if entry.status == "partial":
            assert entry.note, entry.api
        assert not CJK.search(entry.note or ""), entry.api
        assert not CJK.search(entry.counterpart or ""), entry.api


def test_notes_file_has_no_cjk() -> None:
    assert not CJK.search((REPO / "tools" / "op_notes.toml").read_text(encoding="utf-8"))


def test_data_dir_prefers_packaged_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert datafiles.data_dir("op_tables") == REPO / "op_tables"
    packaged = tmp_path / "porter" / "_data" / "op_tables"
    packaged.mkdir(parents=True)
    monkeypatch.setattr(datafiles, "_PACKAGE_DIR", tmp_path / "porter")
    assert datafiles.data_dir("op_tables") == packaged
    with pytest.raises(FileNotFoundError):
        datafiles.data_dir("no_such_dir")


@pytest.mark.parametrize(
    "target,version", [(t, v) for t, versions in BUILT.items() for v in versions] + [("hip", None)]
)
def test_every_entry_of_every_table_is_valid(target, version) -> None:
    """Entries are checked when first asked for; here all of them are asked for."""
    table = load_api_table(target, version)
    entries = [*table.entries.values(), *table.prefixes.values()]
    assert len(entries) == len(table.entries) + len(table.prefixes) > 0
    assert all(e.status in ("supported", "partial", "unsupported") and e.source for e in entries)
