"""The emulated vendor packages (torch_mlu, torch_npu): device semantics, cross-device errors,
the vendor API list per line, the cncl/hccl backends, transformers/accelerate, and `porter run`.

The device checks run in one subprocess per target under the emulator
(tests/data/emulator_probe.py) so this test process never registers a device; each test
asserts one part of what that process saw. The C++ extension is built once per torch
version into porter's cache, and serves both targets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from porter.emulator import apis, environment  # noqa: E402
from porter.emulator.launch import prepare  # noqa: E402
from porter.emulator.targets import DEVICES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "tests" / "data" / "emulator_probe.py"
TARGETS = tuple(DEVICES)  # mlu, npu
# The vendor line each target's probe runs: mlu's 2.4 list; npu's newest, if it has one.
LINE = {"mlu": "2.4", "npu": apis.default_version("npu")}


def emulated(
    args: list[str],
    devices: int | None = None,
    version: str | None = None,
    timeout: int = 180,
    target: str = "mlu",
    **env: str,
) -> subprocess.CompletedProcess:
    full = environment(devices, version, target=target)
    full.update(OMP_NUM_THREADS="1", **env)
    return subprocess.run(args, env=full, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


@pytest.fixture(scope="session")
def built() -> None:
    prepare(quiet=True)


@pytest.fixture(scope="module", params=TARGETS)
def probe(request, built) -> tuple[str, dict]:
    dev = request.param
    proc = emulated([sys.executable, str(PROBE), dev], devices=2, version=LINE[dev], target=dev)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    failed = {k: v for k, v in results.items() if not v["ok"]}
    assert not failed, json.dumps(failed, indent=1)
    return dev, {k: v["value"] for k, v in results.items()}


def test_factories_copies_and_module_methods(probe):
    dev, probe = probe
    got = probe["factories"]
    assert got["devices"] == [f"{dev}:0", f"{dev}:1", f"{dev}:0", f"{dev}:0"]
    assert got["is_device"] == [True, False]
    assert got["values"] == [[0, 1, 2], [3, 4, 5]] and got["to_cpu_equal"]
    assert got["copy_between_devices"] == [[2, 2, 2], [2, 2, 2]]
    assert got["view_shares"] == [[1, 2, 3], [4, 5, 6]]  # an in-place op on a view reaches the base
    assert got["full"] == [7, 7] and got["empty_like_device"] == f"{dev}:0"


def test_current_device_and_count(probe):
    dev, probe = probe
    got = probe["current_device"]
    assert (got["before"], got["default_after_set"], got["inside"], got["after"], got["count"]) == (
        0,
        f"{dev}:1",
        1,
        0,
        2,
    )
    # The message names the device and the variable that selects cards on this target.
    assert f"{dev}: invalid device ordinal 5" in got["bad_index"]
    assert DEVICES[dev].visible_variable in got["bad_index"]


def test_training_on_the_device_is_bit_identical_to_cpu(probe):
    dev, probe = probe
    got = probe["training_matches_cpu"]
    assert got["device"] == got["cpu"] and got["device"][-1] < got["device"][0]
    assert got["grad_device"] == f"{dev}:0"


def test_mixing_devices_fails_like_an_accelerator(probe):
    dev, probe = probe
    got = probe["cross_device"]
    for key in ("cpu_tensor", "cpu_first", "matmul_cpu"):
        assert got[key] and "Expected all tensors to be on the same device" in got[key] and "cpu" in got[key], key
    assert f"{dev}:0 and {dev}:1" in got["other_device"]
    assert f"on the emulated {dev})" in got["matmul_cpu"]  # the emulator's own check names the device
    assert got["cuda"] is not None  # no CUDA beside an MLU or NPU
    assert got["cpu_scalar_ok"] == [2, 2, 2]  # 0-dim CPU tensors are scalars, as on CUDA
    assert got["cpu_index_ok"] == [0, 3]  # and CPU index tensors are accepted, as on CUDA


def test_out_arguments_are_filled_and_resized(probe):
    dev, probe = probe
    got = probe["out_arguments"]
    assert got["empty"] == [[0, 2, 4], [6, 8, 10]]
    assert got["exact"] == [[0, 2, 4], [6, 8, 10]] and got["same_buffer"]  # written in place, no copy
    assert got["wrong"] == [[1, 2, 3], [4, 5, 6]] and got["wrong_device"] == f"{dev}:0"  # resized, as CPU/CUDA do
    assert got["mse_warnings"] == 0  # mse_loss runs its functional kernel, no resize warning


def test_save_and_load_with_and_without_map_location(probe):
    dev, probe = probe
    assert probe["save_load"] == {"plain": f"{dev}:0", "cpu": "cpu", "device1": f"{dev}:1", "equal": True}


def test_rng_seeds_and_states(probe):
    _, probe = probe
    got = probe["rng"]
    assert got == {
        "seed_repeats": True,
        "state_restores": True,
        "cpu_stream_untouched": True,
        "state_type": "torch.uint8",
        "random_submodule": True,
        "all_states": 2,
    }


def test_autocast_and_grad_scaler(probe):
    _, probe = probe
    got = probe["autocast"]
    assert (got["bf16"], got["fp16"], got["softmax_fp32"], got["outside"]) == (
        "torch.bfloat16",
        "torch.float16",
        "torch.float32",
        "torch.float32",
    )
    assert got["scaler_stepped"] and got["scale"] == 65536.0
    assert "torch.bfloat16" in got["amp_dtypes"]


def test_events_streams_synchronize(probe):
    dev, probe = probe
    got = probe["streams_events"]
    assert got["elapsed"] > 0 and got["query"] is True
    assert got["stream_device"] == got["current_stream"] == f"{dev}:0"


def test_memory_numbers_follow_allocations(probe):
    _, probe = probe
    got = probe["memory"]
    assert got["grown"] == 4 * 1024 * 1024 and got["after_free"] == 0 and got["peak_minus_base"] == 4 * 1024 * 1024
    assert got["reserved_ge_allocated"] and got["free_le_total"] and got["other_device"]
    assert got["stats_keys"][0] == "active_bytes.all.current"


def test_api_list_and_the_card(probe):
    dev, probe = probe
    got = probe["api_list"]
    assert got["has_graph_stub"] and "not emulated" in got["graph_error"]  # listed but not emulated
    assert got["amp_grad_scaler"] and got["bf16"] and got["version"].startswith("emulated-")
    assert not got["has_nvtx"] and f"torch.{dev}.nvtx" in got["nvtx_error"]
    if dev == "mlu":
        assert got["has_memory_snapshot"] and "2.4" in got["nvtx_error"]
        assert got["version"] == "emulated-2.4" and got["capability"] == [3, 0] and "MLU370" in got["card"]
    else:
        # torch_npu answers None unless TORCH_NPU_DEVICE_CAPABILITY says otherwise.
        assert got["capability"] is None and "Ascend" in got["card"]
        assert got["version"] == f"emulated-{LINE['npu']}" and f"torch_npu for torch {LINE['npu']}" in got["nvtx_error"]


def test_npu_capability_follows_its_variable(built):
    code = "import torch, torch_npu; print(torch.npu.get_device_capability())"
    proc = emulated([sys.executable, "-c", code], target="npu", TORCH_NPU_DEVICE_CAPABILITY="9.0")
    assert proc.stdout.strip() == "(9, 0)", proc.stderr[-2000:]


def test_torch_npu_holds_what_libraries_import_from_it(built):
    """transformers imports npu_fusion_attention from torch_npu when it finds torch_npu, and
    Ascend's docs write torch_npu.npu.X: both are there; a fused operator the emulator lacks
    says so when called. transformers and accelerate see the NPU."""
    code = (
        "import torch, torch_npu, torch_npu.npu\n"
        "from torch_npu.npu import amp\n"
        "from torch_npu import npu_fusion_attention, npu_rms_norm\n"
        "from transformers.utils import is_torch_npu_available\n"
        "from accelerate.utils import is_npu_available\n"
        "print(torch_npu.npu is torch.npu, amp is torch.npu.amp, is_torch_npu_available(), is_npu_available())\n"
        "print(torch.accelerator.current_accelerator(), torch.distributed.get_default_backend_for_device('npu'))\n"
        "torch.npu.set_compile_mode(jit_compile=False)\n"
        "try:\n    npu_rms_norm()\nexcept NotImplementedError as e:\n    print('NI', e)\n"
    )
    proc = emulated([sys.executable, "-c", code], target="npu", HF_HUB_OFFLINE="1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == "True True True True" and lines[1] == "npu hccl"
    assert lines[2].startswith("NI torch_npu.npu_rms_norm")


FLASH_ATTENTION_SCRIPT = """
import torch, torch_npu
from transformers import LlamaConfig, LlamaForCausalLM
cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, max_position_embeddings=64)
torch.manual_seed(0)
eager = LlamaForCausalLM._from_config(cfg, attn_implementation="eager").to("npu").eval()
flash = LlamaForCausalLM._from_config(cfg, attn_implementation="flash_attention_2", dtype=torch.float32).to("npu").eval()
flash.load_state_dict(eager.state_dict())
ids = torch.randint(0, 64, (2, 8), device="npu")
mask = torch.ones(2, 8, dtype=torch.long, device="npu")
mask[1, 5:] = 0  # padding: transformers unpads and calls the packed (TND) form
with torch.no_grad():
    full = (eager(input_ids=ids).logits - flash(input_ids=ids).logits).abs().max().item()
    a, b = eager(input_ids=ids, attention_mask=mask).logits, flash(input_ids=ids, attention_mask=mask).logits
    padded = max((a[0] - b[0]).abs().max().item(), (a[1, :5] - b[1, :5]).abs().max().item())
print("DIFF", full, padded, flash.config._attn_implementation)
"""


def test_flash_attention_2_runs_on_the_emulated_npu(built):
    """transformers sends flash_attention_2 on NPU to torch_npu.npu_fusion_attention (no
    flash-attn package there): emulated, it gives eager attention's logits, causal and padded."""
    pytest.importorskip("transformers")
    proc = emulated([sys.executable, "-c", FLASH_ATTENTION_SCRIPT], target="npu", HF_HUB_OFFLINE="1", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    _, full, padded, implementation = proc.stdout.strip().splitlines()[-1].split()
    assert float(full) < 1e-5 and float(padded) < 1e-5 and implementation == "flash_attention_2"


def test_one_vendor_package_per_process(built):
    """A process emulating npu sees no torch_mlu (transformers would import it and register a
    second device), also when its caller ran under the mlu emulator."""
    code = "import importlib.util; print(importlib.util.find_spec('torch_mlu'), importlib.util.find_spec('torch_npu') is not None)"
    inner = environment(target="npu", base=environment(target="mlu"))
    proc = subprocess.run([sys.executable, "-c", code], env=inner, capture_output=True, text=True, cwd=ROOT)
    assert proc.stdout.strip() == "None True", proc.stderr[-2000:]


def test_api_list_follows_the_version(built):
    code = (
        "import torch, torch_mlu\n"
        "try:\n    torch.mlu.memory_snapshot()\nexcept AttributeError as e:\n    print('AE', e)\n"
        "print(hasattr(torch.mlu, 'memory_snapshot'), hasattr(torch.mlu, 'synchronize'))"
    )
    old = emulated([sys.executable, "-c", code], version="2.1")
    assert old.returncode == 0, old.stderr[-2000:]
    assert "AE torch.mlu.memory_snapshot is not available in torch_mlu for torch 2.1" in old.stdout
    assert old.stdout.strip().endswith("False True")
    new = emulated([sys.executable, "-c", code], version="2.4")
    assert "AE" not in new.stdout and new.stdout.strip().endswith("True True")


def test_vendor_lists_differ_where_the_tables_do():
    assert "memory_snapshot" in apis.listed("2.4") and "memory_snapshot" not in apis.listed("2.1")
    assert "amp.GradScaler.step" in apis.listed("2.1")
    assert apis.allowed("2.1", "manual_seed_all") and not apis.allowed("2.4", "nvtx")
    with pytest.raises(ValueError, match="no torch_mlu API list for version '9.9'"):
        apis.listed("9.9")


@pytest.mark.parametrize("dev", TARGETS)
def test_every_api_list_names_the_device_module(dev):
    """The emulated module is cut to the list's torch.<dev> names (torch_npu.npu.X counts too):
    a table without them would leave the module bare."""
    assert apis.versions(dev), f"no API list for {dev}"
    for version in apis.versions(dev):
        assert {"synchronize", "device_count", "Stream", "amp.autocast"} <= apis.listed(version, dev), version
    assert apis.default_version(dev) == apis.versions(dev)[-1]


@pytest.mark.parametrize("dev", TARGETS)
@pytest.mark.parametrize(("devices", "visible", "count"), [(None, "0,1,2", "3"), (4, "1,3,5", "2")])
def test_device_count_from_the_visible_devices_variable(built, dev, devices, visible, count):
    # --devices is the machine's card count; MLU_VISIBLE_DEVICES (ASCEND_RT_VISIBLE_DEVICES)
    # selects among the cards.
    proc = emulated(
        [sys.executable, "-c", f"import torch, torch_{dev}; print(torch.{dev}.device_count())"],
        devices=devices,
        target=dev,
        **{DEVICES[dev].visible_variable: visible},
    )
    assert proc.stdout.strip() == count, proc.stderr[-2000:]


@pytest.mark.parametrize("dev", TARGETS)
def test_the_vendor_package_is_only_on_the_path_of_processes_porter_starts(dev):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", f"import torch_{dev}"], env=env, capture_output=True, text=True)
    assert proc.returncode != 0 and f"No module named 'torch_{dev}'" in proc.stderr


@pytest.mark.parametrize("dev", TARGETS)
def test_porter_run_passes_the_exit_code_and_devices(built, dev):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop(DEVICES[dev].visible_variable, None)
    code = (
        f"import sys, torch, torch_{dev}; print(torch.{dev}.device_count(), torch.ones(1, device='{dev}:2').device);"
        " sys.exit(7)"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "porter", "run", "--emulate", dev, "--devices", "3", "--", "python", "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 7, proc.stderr[-2000:]
    assert proc.stdout.strip() == f"3 {dev}:2"


@pytest.mark.parametrize("dev", TARGETS)
def test_porter_run_rejects_an_unknown_version(dev):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "porter", "run", "--emulate", dev, "--target-version", "1.0", "--", "python", "-c", ""]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    known = ", ".join(apis.versions(dev))
    assert proc.returncode == 2 and f"1.0 is not a known torch_{dev} line (known: {known})" in proc.stderr


def test_convert_and_check_never_import_torch(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text("import torch\nx = torch.zeros(2).cuda()\n", encoding="utf-8")
    code = (
        "import sys\nfrom porter.cli import main\n"
        f"for args in (['check', {str(src)!r}, '--target', 'mlu', '--no-cache'], ['convert', {str(src)!r}, '--target', 'mlu']):\n"
        "    try:\n        main(args)\n    except SystemExit:\n        pass\n"
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH', file=sys.stderr)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.stderr.strip().endswith("NO-TORCH"), proc.stderr[-2000:]
    assert (tmp_path / "src_mlu" / "train.py").is_file()


def for_target(script: str, dev: str) -> str:
    """A script written for mlu and cncl, with the names of `dev` and its backend instead."""
    return script.replace("mlu", dev).replace("cncl", DEVICES[dev].backend)


CNCL_SCRIPT = """
import os, torch, torch_mlu, torch.distributed as dist
rank = int(os.environ["RANK"]); torch.mlu.set_device(rank)
dist.init_process_group("cncl")
out = {"backend": dist.get_backend()}
t = torch.full((3,), float(rank + 1), device="mlu"); dist.all_reduce(t); out["all_reduce"] = t.tolist()
b = torch.full((2,), float(rank), device="mlu"); dist.broadcast(b, 1); out["broadcast"] = b.tolist()
parts = [torch.empty(2, device="mlu") for _ in range(2)]
dist.all_gather(parts, torch.full((2,), float(rank), device="mlu")); out["all_gather"] = [p.tolist() for p in parts]
rs = torch.empty(2, device="mlu"); dist.reduce_scatter_tensor(rs, torch.arange(4.0, device="mlu")); out["reduce_scatter"] = rs.tolist()
# Shapes NCCL (and CNCL) take and gloo alone would refuse: a flat output for a (1, n) input, as
# accelerate's gather passes (the Trainer's evaluation with 2 processes), and a scalar input.
flat = torch.empty(4, device="mlu"); dist.all_gather_into_tensor(flat, torch.full((1, 2), float(rank), device="mlu"))
scalars = torch.empty(2, device="mlu"); dist.all_gather_into_tensor(scalars, torch.tensor(float(rank), device="mlu"))
out["gather_shapes"] = [flat.tolist(), scalars.tolist()]
dist.barrier()
try:
    dist.all_reduce(torch.ones(2))
    out["cpu_tensor"] = None
except Exception as exc:
    out["cpu_tensor"] = str(exc)
torch.manual_seed(0)
model = torch.nn.Linear(4, 1).mlu()
ddp = torch.nn.parallel.DistributedDataParallel(model, find_unused_parameters=True)
ddp(torch.full((8, 4), float(rank + 1), device="mlu")).sum().backward()
out["ddp_grad"] = model.weight.grad.cpu().tolist()
out["grad_device"] = str(model.weight.grad.device)
# One file per rank: two processes printing to one pipe may interleave their lines.
with open(os.path.join(os.environ["RESULTS"], f"rank{rank}.json"), "w") as f:
    f.write(__import__("json").dumps(out))
dist.destroy_process_group()
"""


@pytest.mark.slow
@pytest.mark.parametrize("dev", TARGETS)
def test_the_vendor_backend_with_two_processes(built, tmp_path, dev):
    script = tmp_path / "backend_check.py"
    script.write_text(for_target(CNCL_SCRIPT, dev), encoding="utf-8")
    proc = emulated(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", str(script)],
        devices=2,
        timeout=240,
        target=dev,
        RESULTS=str(tmp_path),
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    got = {rank: json.loads((tmp_path / f"rank{rank}.json").read_text(encoding="utf-8")) for rank in (0, 1)}
    for rank, out in got.items():
        assert out["backend"] == DEVICES[dev].backend
        assert out["all_reduce"] == [3.0, 3.0, 3.0]
        assert out["broadcast"] == [1.0, 1.0]
        assert out["all_gather"] == [[0.0, 0.0], [1.0, 1.0]]
        assert out["reduce_scatter"] == ([0.0, 2.0] if rank == 0 else [4.0, 6.0])
        assert out["gather_shapes"] == [[0.0, 0.0, 1.0, 1.0], [0.0, 1.0]]
        assert f"Tensors must be {dev.upper()}" in out["cpu_tensor"]
        assert out["grad_device"] == f"{dev}:{rank}"
    # DDP averages the gradients: inputs of 1 and 2 give 8*1.5 per weight on both ranks.
    assert got[0]["ddp_grad"] == got[1]["ddp_grad"] == [[12.0, 12.0, 12.0, 12.0]]


OBJECTS_AND_MESH_SCRIPT = """
import os, json, torch, torch_mlu, torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Shard, distribute_tensor
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]); torch.mlu.set_device(rank)
dist.init_process_group("cncl")
out = {"object_device": dist.distributed_c10d._get_object_coll_device()}
got = [None] * world
dist.all_gather_object(got, {"rank": rank, "t": torch.full((1,), float(rank), device="mlu")})
out["all_gather_object"] = [[g["rank"], str(g["t"].device), g["t"].tolist()] for g in got]
objs = [f"from{rank}", {"n": rank}]; dist.broadcast_object_list(objs, src=world - 1); out["broadcast_object_list"] = objs
gathered = [None] * world if rank == 0 else None
dist.gather_object(("r", rank), gathered, dst=0); out["gather_object"] = gathered
one = [None]; dist.scatter_object_list(one, [f"to{i}" for i in range(world)] if rank == 0 else None, src=0)
out["scatter_object_list"] = one[0]
mesh = init_device_mesh("mlu", (2, world // 2), mesh_dim_names=("dp", "tp"))
t = torch.full((1,), float(rank), device="mlu"); dist.all_reduce(t, group=mesh["tp"].get_group())
out["mesh"] = [mesh.device_type, dist.get_backend(mesh["dp"].get_group()), mesh["dp"].size(), t.item()]
flat = init_device_mesh("mlu", (world,))
d = distribute_tensor(torch.arange(float(2 * world), device="mlu"), flat, [Shard(0)])
out["dtensor"] = [d.to_local().tolist(), d.full_tensor().tolist(), str(d.to_local().device)]
with open(os.path.join(os.environ["RESULTS"], f"rank{rank}.json"), "w") as f:
    json.dump(out, f)
dist.destroy_process_group()
"""


@pytest.mark.slow
@pytest.mark.parametrize(("dev", "world"), [("mlu", 2), ("mlu", 4), ("npu", 2)])
def test_object_collectives_and_device_meshes_on_the_vendor_backend(built, tmp_path, dev, world):
    """As on NCCL: objects are pickled into tensors on the current device (the group has
    "mlu" or "npu" as its device), tensors inside them keep their device, and meshes and
    DTensors build on cncl and hccl groups."""
    script = tmp_path / "objects.py"
    script.write_text(for_target(OBJECTS_AND_MESH_SCRIPT, dev), encoding="utf-8")
    proc = emulated(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(world), str(script)],
        devices=world,
        timeout=300,
        target=dev,
        RESULTS=str(tmp_path),
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    for rank in range(world):
        out = json.loads((tmp_path / f"rank{rank}.json").read_text(encoding="utf-8"))
        assert out["object_device"] == dev
        assert out["all_gather_object"] == [[r, f"{dev}:{r}", [float(r)]] for r in range(world)]
        assert out["broadcast_object_list"] == [f"from{world - 1}", {"n": world - 1}]
        assert out["gather_object"] == ([["r", r] for r in range(world)] if rank == 0 else None)
        assert out["scatter_object_list"] == f"to{rank}"
        tp = world // 2
        first = rank - rank % tp  # the tp group holds ranks first .. first+tp-1
        assert out["mesh"] == [dev, DEVICES[dev].backend, 2, float(sum(range(first, first + tp)))]
        assert out["dtensor"] == [[2.0 * rank, 2.0 * rank + 1], [float(i) for i in range(2 * world)], f"{dev}:{rank}"]


GROUP_TEARDOWN_SCRIPT = """
import gc, os, torch, torch_mlu, torch.distributed as dist
from datetime import timedelta
from porter.emulator.collectives import group_class
from porter.emulator.targets import MLU
def gloo_threads():
    return sum(open(f"/proc/self/task/{t}/comm").read().strip() == "pt_gloo_runloop" for t in os.listdir("/proc/self/task"))
group = group_class(MLU)(dist.HashStore(), 0, 1, timedelta(seconds=60))
group.allreduce([torch.ones(8, device="mlu")]).wait()
del group
gc.collect()
print("GLOO_THREADS", gloo_threads(), flush=True)
"""


@pytest.mark.slow
def test_a_vendor_group_is_not_torn_down_under_the_gil(built):
    """Dropping the inner gloo group joins its threads with the GIL held, while one of them may
    need the GIL to release a finished collective's tensors: a 2-device LoRA run hung at exit
    so (rank 1 in ~ProcessGroupGloo's join under DDP's reducer, its gloo thread in a tensor's
    decref). The gloo group lives until the process ends: its threads outlive the group (they
    were joined when it was dropped)."""
    proc = emulated([sys.executable, "-c", GROUP_TEARDOWN_SCRIPT], devices=1, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    counts = [int(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("GLOO_THREADS")]
    assert counts and counts[0] > 0, proc.stdout


WORKS_AT_EXIT_SCRIPT = """
import atexit, sys, torch, torch_mlu, torch.distributed as dist
from porter.emulator import collectives
dist.init_process_group("cncl", rank=0, world_size=1, store=dist.HashStore())
t = torch.ones(4, device="mlu")
work = dist.all_reduce(t, async_op=True)
work.wait()
print("OWNERS", collectives._EXT.work_owners(work), work in collectives._WORKS, flush=True)
before = sys.getrefcount(collectives._WORKS)
atexit._run_exitfuncs()  # what the interpreter runs first at shutdown, while other threads can still take the GIL
print("HELD", sys.getrefcount(collectives._WORKS) - before, flush=True)
"""


@pytest.mark.slow
def test_works_gloo_may_still_hold_outlive_the_interpreter(built):
    """A collective's Work is let go by the last of its owners, which decrefs the Python-made
    tensors it holds and so needs the GIL. When that owner was gloo's worker thread, finishing
    its loop just after the caller saw the collective complete, while the interpreter shut
    down, CPython ended the thread inside the Work's destructor and the process aborted
    ("terminate called without an active exception", -6, ~1 in 20 two-rank runs). Every Work
    is tracked, its owners are counted by the extension, and at exit the tracked ones are
    kept for good (the exit hook's reference is never given back)."""
    proc = emulated([sys.executable, "-c", WORKS_AT_EXIT_SCRIPT], devices=1, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    owners = next(line.split() for line in proc.stdout.splitlines() if line.startswith("OWNERS"))
    assert int(owners[1]) >= 2 and owners[2] == "True", proc.stdout  # its Python object and the call, at least
    held = next(line.split() for line in proc.stdout.splitlines() if line.startswith("HELD"))
    assert held[1] == "1", proc.stdout


class _Owners:
    """The extension's count of a Work's owners, as a table (what gloo would still hold)."""

    def __init__(self, owners: dict[str, int]) -> None:
        self.owners = owners

    def work_owners(self, work: str) -> int:
        return self.owners[work]


def test_a_work_is_let_go_only_once_its_python_object_alone_owns_it(monkeypatch):
    """Works nothing but their Python object owns (2, counting the call) are let go on the
    caller's thread; one gloo (or anyone in C++) still holds is kept, and the list is pruned
    at amortized intervals, so a long run keeps only what is in flight."""
    pytest.importorskip("torch")
    from porter.emulator import collectives

    owners = {f"w{i}": 2 for i in range(70)} | {"in-flight": 3}
    monkeypatch.setattr(collectives, "_EXT", _Owners(owners))
    monkeypatch.setattr(collectives, "_WORKS", [])
    monkeypatch.setattr(collectives, "_PRUNE_AT", 64)
    collective = collectives._tracked(lambda name: name)
    collective("in-flight")
    for i in range(62):
        collective(f"w{i}")
    assert len(collectives._WORKS) == 63  # not pruned yet
    collective("w62")  # the 64th: a prune
    assert collectives._WORKS == ["in-flight"] and collectives._PRUNE_AT == 64
    owners["in-flight"] = 2  # gloo let go
    for i in range(63, 70):
        collective(f"w{i}")
    collectives._let_go()
    assert collectives._WORKS == []


TRAINER_SCRIPT = """
import torch, torch_mlu
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments
from transformers.utils import is_torch_mlu_available
from accelerate import Accelerator
print("AVAILABLE", is_torch_mlu_available(), Accelerator().device)
torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                  num_key_value_heads=2, max_position_embeddings=64)
model = LlamaForCausalLM(cfg)
class Data(torch.utils.data.Dataset):
    def __len__(self):
        return 32
    def __getitem__(self, i):
        ids = torch.arange(16) % 7 + (i % 3)
        return {"input_ids": ids, "labels": ids}
args = TrainingArguments(OUT, max_steps=16, per_device_train_batch_size=4, learning_rate=5e-3, logging_steps=4,
                         report_to=[], bf16=True, save_strategy="steps", save_steps=16, disable_tqdm=True)
trainer = Trainer(model=model, args=args, train_dataset=Data())
trainer.train()
print("DEVICE", args.device, next(model.parameters()).device)
print("LOSSES", [h["loss"] for h in trainer.state.log_history if "loss" in h])
"""


@pytest.mark.slow
@pytest.mark.parametrize("dev", TARGETS)
def test_transformers_trainer_runs_on_the_device(built, tmp_path, dev):
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")  # Trainer needs it; the emulate extra installs it
    proc = emulated(
        [sys.executable, "-c", f"OUT = {str(tmp_path / 'out')!r}\n" + for_target(TRAINER_SCRIPT, dev)],
        timeout=300,
        target=dev,
        HF_HUB_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in proc.stdout.splitlines() if " " in line}
    assert lines["AVAILABLE"] == f"True {dev}"
    assert lines["DEVICE"] == f"{dev}:0 {dev}:0"
    losses = json.loads(lines["LOSSES"])
    assert len(losses) == 4 and losses[-1] < losses[0]
    # The checkpoint holds the device's RNG state (Trainer reads it through torch.<dev>.random).
    assert (tmp_path / "out" / "checkpoint-16" / "rng_state.pth").is_file()


@pytest.mark.slow
def test_a_build_killed_midway_does_not_hang_later_loads(built, tmp_path):
    """torch leaves its build `lock` behind when a build is killed; a later load must not wait
    for it forever (porter's own lock says no build is running)."""
    import shutil

    from porter.emulator.build import build_dir

    cache = tmp_path / "emulator"
    copy = cache / build_dir().name
    shutil.copytree(build_dir(), copy, ignore=shutil.ignore_patterns("lock", ".porter-lock"))
    (copy / "lock").write_text("")  # what a killed build leaves
    # The limit only guards against the hang (a load that waits for the lock never ends); a
    # load on a busy machine took over 120 s, so it is generous.
    proc = emulated(
        [sys.executable, "-c", "import torch, torch_mlu; print(torch.ones(1, device='mlu').device)"],
        devices=1,
        timeout=600,
        PORTER_EMULATOR_CACHE=str(cache),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "mlu:0" in proc.stdout and not (copy / "lock").exists()


def test_two_checkouts_of_the_same_source_share_one_build(tmp_path, monkeypatch):
    """The build folder is keyed by the source's bytes; the build itself must not record the
    checkout's path, or a second checkout (a worktree, CI's clone) rebuilds over the first on
    every load, and loads in both wait on each other's builds."""
    import torch.utils.cpp_extension

    from porter.emulator import build

    monkeypatch.setenv("PORTER_EMULATOR_CACHE", str(tmp_path / "cache"))
    compiled: list[list[str]] = []
    monkeypatch.setattr(torch.utils.cpp_extension, "load", lambda name, sources, **kw: compiled.append(sources))
    text = build.SOURCE.read_bytes()
    for checkout in ("one", "two"):
        source = tmp_path / checkout / build.SOURCE.name
        source.parent.mkdir()
        source.write_bytes(text)
        monkeypatch.setattr(build, "SOURCE", source)
        build.load_extension()
    assert compiled[0] == compiled[1]
    assert Path(compiled[0][0]).parent == build.build_dir() and Path(compiled[0][0]).read_bytes() == text


def _fake_environment(root: Path, version: str = "2.13.0+cpu") -> Path:
    """A second virtual environment's torch, as build_inputs sees one: a torch folder and
    the dist-info beside it (nothing is compiled against it; cpp_extension.load is faked)."""
    site = root / "lib" / "python3.11" / "site-packages"
    (site / "torch").mkdir(parents=True)
    info = site / f"torch-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n", encoding="utf-8")
    return site / "torch"


def test_two_environments_keep_a_build_each(tmp_path, monkeypatch):
    """A build records its environment's torch, compiler and Python: two virtual environments
    on one machine, loading in turn, each find their own build and never rebuild the other's."""
    import torch.utils.cpp_extension

    from porter.emulator import build

    monkeypatch.setenv("PORTER_EMULATOR_CACHE", str(tmp_path / "cache"))
    loads: list[str] = []
    monkeypatch.setattr(
        torch.utils.cpp_extension, "load", lambda name, sources, build_directory, **kw: loads.append(build_directory)
    )
    here, other = build.torch_location(), _fake_environment(tmp_path / "venv2")
    for torch_dir in (here, other, here, other):
        monkeypatch.setattr(build, "torch_location", lambda torch_dir=torch_dir: torch_dir)
        build.load_extension()
    assert loads[0] == loads[2] != loads[1] == loads[3]
    recorded = [json.loads((Path(d) / build.INPUTS_FILE).read_text(encoding="utf-8")) for d in loads[:2]]
    assert [r["torch"] for r in recorded] == [str(here), str(other)]
    assert recorded[1]["torch_version"] == "2.13.0+cpu"


def test_the_build_key_follows_what_the_build_depends_on(tmp_path, monkeypatch):
    from porter.emulator import build

    monkeypatch.setenv("PORTER_EMULATOR_CACHE", str(tmp_path / "cache"))
    cpu, cuda = _fake_environment(tmp_path / "a"), _fake_environment(tmp_path / "b", "2.13.0+cu126")
    monkeypatch.setattr(build, "torch_location", lambda: cpu)
    first = build.build_dir()
    assert build.build_dir() == first
    monkeypatch.setenv("CXX", "clang++")
    assert build.build_dir() != first
    monkeypatch.delenv("CXX")
    monkeypatch.setattr(build, "torch_location", lambda: cuda)
    assert build.build_dir() != first


def test_porter_and_the_emulated_process_agree_on_the_build(tmp_path):
    """porter's own process (no torch imported) decides whether to build; the process that
    imports torch_mlu (torch imported) loads: both must name the same folder."""
    from porter.emulator.build import build_dir

    code = "import sys; from porter.emulator.build import build_dir; print(build_dir())"
    without = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert without.returncode == 0, without.stderr
    assert "torch" in sys.modules and without.stdout.strip() == str(build_dir())
