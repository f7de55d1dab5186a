"""Device-semantics probe for tests/test_emulator.py, run under the emulator of the device
named on the command line (mlu, npu).

Each check runs in this one process (torch is imported once) and records either its
observations or the error it raised; the test asserts on the JSON this prints.
"""

import importlib
import io
import json
import sys
import traceback

import torch

DEV = sys.argv[1] if len(sys.argv) > 1 else "mlu"
vendor = importlib.import_module(f"torch_{DEV}")
mod = getattr(torch, DEV)  # torch.mlu, torch.npu

results = {}


def check(fn):
    try:
        results[fn.__name__] = {"ok": True, "value": fn()}
    except BaseException as exc:  # noqa: BLE001
        results[fn.__name__] = {
            "ok": False,
            "error": f"{type(exc).__name__}: {exc}",
            "trace": traceback.format_exc()[-1500:],
        }
    return fn


def raises(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {exc}"
    return None


@check
def factories():
    a = torch.arange(6, dtype=torch.float32, device=DEV).reshape(2, 3)
    b = torch.ones(2, 3).to(f"{DEV}:1")
    c = getattr(torch.zeros(2, 3), DEV)()  # Tensor.mlu() / Tensor.npu()
    lin = getattr(torch.nn.Linear(3, 2), DEV)()
    return {
        "devices": [str(a.device), str(b.device), str(c.device), str(lin.weight.device)],
        "is_device": [getattr(a, f"is_{DEV}"), getattr(torch.ones(1), f"is_{DEV}")],
        "values": a.cpu().tolist(),
        "to_cpu_equal": torch.equal(a.to("cpu"), torch.arange(6.0).reshape(2, 3)),
        "copy_between_devices": b.to(f"{DEV}:0").add(1).cpu().tolist(),
        "view_shares": (a.view(-1).add_(1), a.cpu().tolist())[1],
        "full": torch.full((2,), 7.0, device=DEV).cpu().tolist(),
        "empty_like_device": str(torch.empty_like(a).device),
    }


@check
def current_device():
    before = mod.current_device()
    mod.set_device(1)
    on_default = str(torch.ones(1, device=DEV).device)
    mod.set_device(0)
    with mod.device(1):
        inside = mod.current_device()
    return {
        "before": before,
        "default_after_set": on_default,
        "inside": inside,
        "after": mod.current_device(),
        "count": mod.device_count(),
        "bad_index": raises(lambda: torch.ones(1, device=f"{DEV}:5")),
    }


def _train(device):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 8, generator=g).to(device), torch.randn(32, 1, generator=g).to(device)
    losses = []
    for _ in range(5):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, str(next(model.parameters()).grad.device)


@check
def training_matches_cpu():
    on_device, grad_device = _train(DEV)
    cpu, _ = _train("cpu")
    return {"device": on_device, "cpu": cpu, "grad_device": grad_device}


@check
def cross_device():
    a = torch.ones(3, device=DEV)
    return {
        "cpu_tensor": raises(lambda: a + torch.ones(3)),
        "cpu_first": raises(lambda: torch.ones(3) * a),
        "other_device": raises(lambda: a + torch.ones(3, device=f"{DEV}:1")),
        "matmul_cpu": raises(lambda: torch.ones(2, 3, device=DEV) @ torch.ones(3, 2)),
        "cuda": raises(lambda: a + torch.ones(3, device="cuda")),
        "cpu_scalar_ok": (a * torch.tensor(2.0)).cpu().tolist(),
        "cpu_index_ok": torch.arange(5.0, device=DEV)[torch.tensor([0, 3])].cpu().tolist(),
    }


@check
def out_arguments():
    import warnings

    x = torch.arange(6.0, device=DEV).reshape(2, 3)
    empty = torch.empty(0, device=DEV)
    torch.add(x, x, out=empty)
    exact = torch.empty(2, 3, device=DEV)
    exact_ptr = exact.data_ptr()
    torch.mul(x, 2, out=exact)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wrong = torch.empty(2, device=DEV)
        torch.add(x, 1, out=wrong)
        mse_warnings_before = len(caught)
        torch.nn.functional.mse_loss(x, x + 1)
    return {
        "empty": empty.cpu().tolist(),
        "exact": exact.cpu().tolist(),
        "same_buffer": exact.data_ptr() == exact_ptr,
        "wrong": wrong.cpu().tolist(),
        "wrong_device": str(wrong.device),
        "mse_warnings": len(caught) - mse_warnings_before,
    }


@check
def save_load():
    model = torch.nn.Linear(4, 2).to(DEV)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    plain = torch.load(io.BytesIO(buf.getvalue()))
    to_cpu = torch.load(io.BytesIO(buf.getvalue()), map_location="cpu")
    to_one = torch.load(io.BytesIO(buf.getvalue()), map_location=f"{DEV}:1")
    return {
        "plain": str(plain["weight"].device),
        "cpu": str(to_cpu["weight"].device),
        "device1": str(to_one["weight"].device),
        "equal": torch.equal(to_cpu["weight"], model.weight.detach().cpu()),
    }


@check
def rng():
    torch.manual_seed(123)
    first = torch.randn(4, device=DEV).cpu()
    torch.manual_seed(123)
    again = torch.randn(4, device=DEV).cpu()
    state = mod.get_rng_state()
    x = torch.rand(4, device=DEV).cpu()
    mod.set_rng_state(state)
    y = torch.rand(4, device=DEV).cpu()
    mod.manual_seed(5)
    cpu_before = torch.get_rng_state()
    torch.rand(4, device=DEV)
    via_submodule = torch.equal(mod.random.get_rng_state(), mod.get_rng_state())
    return {
        "seed_repeats": torch.equal(first, again),
        "state_restores": torch.equal(x, y),
        "random_submodule": via_submodule,
        "all_states": len(mod.random.get_rng_state_all()),
        "cpu_stream_untouched": torch.equal(cpu_before, torch.get_rng_state()),
        "state_type": str(state.dtype),
    }


@check
def autocast():
    lin = torch.nn.Linear(4, 4).to(DEV)
    x = torch.randn(2, 4, device=DEV)
    with torch.autocast(DEV, dtype=torch.bfloat16):
        bf = lin(x)
        soft = torch.softmax(bf, -1)
    with mod.amp.autocast(dtype=torch.float16):
        fp = lin(x)
    scaler = mod.amp.GradScaler()
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    before = lin.weight.detach().cpu().clone()
    with torch.autocast(DEV, dtype=torch.float16):
        loss = lin(x).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    return {
        "bf16": str(bf.dtype),
        "fp16": str(fp.dtype),
        "softmax_fp32": str(soft.dtype),
        "outside": str(lin(x).dtype),
        "scaler_stepped": not torch.equal(before, lin.weight.detach().cpu()),
        "scale": scaler.get_scale(),
        "amp_dtypes": [str(d) for d in mod.get_amp_supported_dtype()],
    }


@check
def streams_events():
    start, end = mod.Event(enable_timing=True), mod.Event(enable_timing=True)
    start.record()
    torch.randn(64, 64, device=DEV) @ torch.randn(64, 64, device=DEV)
    end.record()
    mod.synchronize()
    s = mod.Stream()
    with mod.stream(s):
        pass
    return {
        "elapsed": start.elapsed_time(end),
        "query": end.query(),
        "stream_device": str(s.device),
        "current_stream": str(mod.current_stream().device),
    }


@check
def memory():
    mod.reset_peak_memory_stats()
    base = mod.memory_allocated()
    big = torch.empty(1024, 1024, device=DEV)  # 4 MiB
    grown = mod.memory_allocated() - base
    del big
    after = mod.memory_allocated() - base
    stats = mod.memory_stats()
    free, total = mod.mem_get_info()
    return {
        "grown": grown,
        "after_free": after,
        "peak_minus_base": mod.max_memory_allocated() - base,
        "reserved_ge_allocated": mod.memory_reserved() >= mod.memory_allocated(),
        "stats_keys": sorted(stats)[:3],
        "free_le_total": 0 < free <= total,
        "other_device": mod.memory_allocated(1) >= 0,
    }


@check
def api_list():
    missing = raises(lambda: mod.nvtx)
    return {
        "has_memory_snapshot": hasattr(mod, "memory_snapshot"),
        "has_nvtx": hasattr(mod, "nvtx"),
        "nvtx_error": missing,
        "has_graph_stub": hasattr(mod, f"{DEV.upper()}Graph"),
        "graph_error": raises(lambda: getattr(mod, f"{DEV.upper()}Graph")()),
        "amp_grad_scaler": hasattr(mod.amp, "GradScaler"),
        "bf16": mod.is_bf16_supported(),
        "version": vendor.__version__,
        "capability": mod.get_device_capability(),
        "card": mod.get_device_name(),
    }


print(json.dumps(results))
sys.stdout.flush()
