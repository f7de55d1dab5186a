"""The emulated torch_mlu: device semantics, cross-device errors, the vendor API list per
torch_mlu line, the cncl backend, transformers/accelerate, and `porter run`.

The device checks run in one subprocess under the emulator (tests/data/emulator_probe.py)
so this test process never registers the mlu device; each test asserts one part of what
that process saw. The C++ extension is built once per torch version into porter's cache.
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

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "tests" / "data" / "emulator_probe.py"


def emulated(
    args: list[str], devices: int | None = None, version: str | None = None, timeout: int = 180, **env: str
) -> subprocess.CompletedProcess:
    full = environment(devices, version)
    full.update(OMP_NUM_THREADS="1", **env)
    return subprocess.run(args, env=full, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


@pytest.fixture(scope="session")
def built() -> None:
    prepare(quiet=True)


@pytest.fixture(scope="module")
def probe(built) -> dict:
    proc = emulated([sys.executable, str(PROBE)], devices=2, version="2.4")
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    failed = {k: v for k, v in results.items() if not v["ok"]}
    assert not failed, json.dumps(failed, indent=1)
    return {k: v["value"] for k, v in results.items()}


def test_factories_copies_and_module_mlu(probe):
    got = probe["factories"]
    assert got["devices"] == ["mlu:0", "mlu:1", "mlu:0", "mlu:0"]
    assert got["is_mlu"] == [True, False]
    assert got["values"] == [[0, 1, 2], [3, 4, 5]] and got["to_cpu_equal"]
    assert got["copy_between_devices"] == [[2, 2, 2], [2, 2, 2]]
    assert got["view_shares"] == [[1, 2, 3], [4, 5, 6]]  # an in-place op on a view reaches the base
    assert got["full"] == [7, 7] and got["empty_like_device"] == "mlu:0"


def test_current_device_and_count(probe):
    got = probe["current_device"]
    assert (got["before"], got["default_after_set"], got["inside"], got["after"], got["count"]) == (0, "mlu:1", 1, 0, 2)
    assert "invalid device ordinal 5" in got["bad_index"]


def test_training_on_mlu_is_bit_identical_to_cpu(probe):
    got = probe["training_matches_cpu"]
    assert got["mlu"] == got["cpu"] and got["mlu"][-1] < got["mlu"][0]
    assert got["grad_device"] == "mlu:0"


def test_mixing_devices_fails_like_an_accelerator(probe):
    got = probe["cross_device"]
    for key in ("cpu_tensor", "cpu_first", "matmul_cpu"):
        assert got[key] and "Expected all tensors to be on the same device" in got[key] and "cpu" in got[key], key
    assert "mlu:0 and mlu:1" in got["other_mlu"]
    assert got["cuda"] is not None  # no CUDA beside an MLU
    assert got["cpu_scalar_ok"] == [2, 2, 2]  # 0-dim CPU tensors are scalars, as on CUDA
    assert got["cpu_index_ok"] == [0, 3]  # and CPU index tensors are accepted, as on CUDA


def test_out_arguments_are_filled_and_resized(probe):
    got = probe["out_arguments"]
    assert got["empty"] == [[0, 2, 4], [6, 8, 10]]
    assert got["exact"] == [[0, 2, 4], [6, 8, 10]] and got["same_buffer"]  # written in place, no copy
    assert got["wrong"] == [[1, 2, 3], [4, 5, 6]] and got["wrong_device"] == "mlu:0"  # resized, as CPU/CUDA do
    assert got["mse_warnings"] == 0  # mse_loss runs its functional kernel, no resize warning


def test_save_and_load_with_and_without_map_location(probe):
    assert probe["save_load"] == {"plain": "mlu:0", "cpu": "cpu", "mlu1": "mlu:1", "equal": True}


def test_rng_seeds_and_states(probe):
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
    got = probe["streams_events"]
    assert got["elapsed"] > 0 and got["query"] is True
    assert got["stream_device"] == got["current_stream"] == "mlu:0"


def test_memory_numbers_follow_allocations(probe):
    got = probe["memory"]
    assert got["grown"] == 4 * 1024 * 1024 and got["after_free"] == 0 and got["peak_minus_base"] == 4 * 1024 * 1024
    assert got["reserved_ge_allocated"] and got["free_le_total"] and got["other_device"]
    assert got["stats_keys"][0] == "active_bytes.all.current"


def test_api_list_of_2_4(probe):
    got = probe["api_list"]
    assert got["has_memory_snapshot"] and not got["has_nvtx"]
    assert "torch.mlu.nvtx" in got["nvtx_error"] and "2.4" in got["nvtx_error"]
    assert got["has_graph_stub"] and "not emulated" in got["graph_error"]  # listed but not emulated
    assert got["amp_grad_scaler"] and got["bf16"] and got["version"] == "emulated-2.4"


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


@pytest.mark.parametrize(("devices", "visible", "count"), [(None, "0,1,2", "3"), (4, "1,3,5", "2")])
def test_device_count_from_mlu_visible_devices(built, devices, visible, count):
    # --devices is the machine's card count; MLU_VISIBLE_DEVICES selects among the cards.
    proc = emulated(
        [sys.executable, "-c", "import torch, torch_mlu; print(torch.mlu.device_count())"],
        devices=devices,
        MLU_VISIBLE_DEVICES=visible,
    )
    assert proc.stdout.strip() == count, proc.stderr[-2000:]


def test_torch_mlu_is_only_on_the_path_of_processes_porter_starts():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", "import torch_mlu"], env=env, capture_output=True, text=True)
    assert proc.returncode != 0 and "No module named 'torch_mlu'" in proc.stderr


def test_porter_run_passes_the_exit_code_and_devices(built):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("MLU_VISIBLE_DEVICES", None)
    code = "import sys, torch, torch_mlu; print(torch.mlu.device_count(), torch.ones(1, device='mlu:2').device); sys.exit(7)"
    proc = subprocess.run(
        [sys.executable, "-m", "porter", "run", "--emulate", "mlu", "--devices", "3", "--", "python", "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 7, proc.stderr[-2000:]
    assert proc.stdout.strip() == "3 mlu:2"


def test_porter_run_rejects_an_unknown_version():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "porter",
            "run",
            "--emulate",
            "mlu",
            "--target-version",
            "1.0",
            "--",
            "python",
            "-c",
            "pass",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "1.0 is not a known torch_mlu line" in proc.stderr


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
def test_cncl_backend_with_two_processes(built, tmp_path):
    script = tmp_path / "cncl_check.py"
    script.write_text(CNCL_SCRIPT, encoding="utf-8")
    proc = emulated(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", str(script)],
        devices=2,
        timeout=240,
        RESULTS=str(tmp_path),
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    got = {rank: json.loads((tmp_path / f"rank{rank}.json").read_text(encoding="utf-8")) for rank in (0, 1)}
    for rank, out in got.items():
        assert out["backend"] == "cncl"
        assert out["all_reduce"] == [3.0, 3.0, 3.0]
        assert out["broadcast"] == [1.0, 1.0]
        assert out["all_gather"] == [[0.0, 0.0], [1.0, 1.0]]
        assert out["reduce_scatter"] == ([0.0, 2.0] if rank == 0 else [4.0, 6.0])
        assert out["gather_shapes"] == [[0.0, 0.0, 1.0, 1.0], [0.0, 1.0]]
        assert "Tensors must be MLU" in out["cpu_tensor"]
        assert out["grad_device"] == f"mlu:{rank}"
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
@pytest.mark.parametrize("world", [2, 4])
def test_object_collectives_and_device_meshes_on_cncl(built, tmp_path, world):
    """As on NCCL: objects are pickled into tensors on the current mlu device (the group has
    "mlu" as its device), tensors inside them keep their device, and meshes and DTensors
    build on cncl groups."""
    script = tmp_path / "objects.py"
    script.write_text(OBJECTS_AND_MESH_SCRIPT, encoding="utf-8")
    proc = emulated(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(world), str(script)],
        devices=world,
        timeout=300,
        RESULTS=str(tmp_path),
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    for rank in range(world):
        out = json.loads((tmp_path / f"rank{rank}.json").read_text(encoding="utf-8"))
        assert out["object_device"] == "mlu"
        assert out["all_gather_object"] == [[r, f"mlu:{r}", [float(r)]] for r in range(world)]
        assert out["broadcast_object_list"] == [f"from{world - 1}", {"n": world - 1}]
        assert out["gather_object"] == ([["r", r] for r in range(world)] if rank == 0 else None)
        assert out["scatter_object_list"] == f"to{rank}"
        tp = world // 2
        first = rank - rank % tp  # the tp group holds ranks first .. first+tp-1
        assert out["mesh"] == ["mlu", "cncl", 2, float(sum(range(first, first + tp)))]
        assert out["dtensor"] == [[2.0 * rank, 2.0 * rank + 1], [float(i) for i in range(2 * world)], f"mlu:{rank}"]


GROUP_TEARDOWN_SCRIPT = """
import gc, os, torch, torch_mlu, torch.distributed as dist
from datetime import timedelta
from porter.emulator.cncl import CnclProcessGroup
def gloo_threads():
    return sum(open(f"/proc/self/task/{t}/comm").read().strip() == "pt_gloo_runloop" for t in os.listdir("/proc/self/task"))
group = CnclProcessGroup(dist.HashStore(), 0, 1, timedelta(seconds=60))
group.allreduce([torch.ones(8, device="mlu")]).wait()
del group
gc.collect()
print("GLOO_THREADS", gloo_threads(), flush=True)
"""


@pytest.mark.slow
def test_a_cncl_group_is_not_torn_down_under_the_gil(built):
    """Dropping the inner gloo group joins its threads with the GIL held, while one of them may
    need the GIL to release a finished collective's tensors: a 2-device LoRA run hung at exit
    so (rank 1 in ~ProcessGroupGloo's join under DDP's reducer, its gloo thread in a tensor's
    decref). The gloo group lives until the process ends: its threads outlive the group (they
    were joined when it was dropped)."""
    proc = emulated([sys.executable, "-c", GROUP_TEARDOWN_SCRIPT], devices=1, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    counts = [int(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("GLOO_THREADS")]
    assert counts and counts[0] > 0, proc.stdout


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
def test_transformers_trainer_runs_on_mlu(built, tmp_path):
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")  # Trainer needs it; the emulate extra installs it
    proc = emulated(
        [sys.executable, "-c", f"OUT = {str(tmp_path / 'out')!r}\n" + TRAINER_SCRIPT],
        timeout=300,
        HF_HUB_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in proc.stdout.splitlines() if " " in line}
    assert lines["AVAILABLE"] == "True mlu"
    assert lines["DEVICE"] == "mlu:0 mlu:0"
    losses = json.loads(lines["LOSSES"])
    assert len(losses) == 4 and losses[-1] < losses[0]
    # The checkpoint holds the mlu RNG state (Trainer reads it through torch.mlu.random).
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
        source = tmp_path / checkout / "mlu_emulator.cpp"
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
