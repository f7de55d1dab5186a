"""Device-semantics probe for tests/test_emulator.py, run under the emulator.

Each check runs in this one process (torch is imported once) and records either its
observations or the error it raised; the test asserts on the JSON this prints.
"""

import io
import json
import sys
import traceback

import torch
import torch_mlu  # noqa: F401

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
    a = torch.arange(6, dtype=torch.float32, device="mlu").reshape(2, 3)
    b = torch.ones(2, 3).to("mlu:1")
    c = torch.zeros(2, 3).mlu()
    lin = torch.nn.Linear(3, 2).mlu()
    return {
        "devices": [str(a.device), str(b.device), str(c.device), str(lin.weight.device)],
        "is_mlu": [a.is_mlu, torch.ones(1).is_mlu],
        "values": a.cpu().tolist(),
        "to_cpu_equal": torch.equal(a.to("cpu"), torch.arange(6.0).reshape(2, 3)),
        "copy_between_devices": b.to("mlu:0").add(1).cpu().tolist(),
        "view_shares": (a.view(-1).add_(1), a.cpu().tolist())[1],
        "full": torch.full((2,), 7.0, device="mlu").cpu().tolist(),
        "empty_like_device": str(torch.empty_like(a).device),
    }


@check
def current_device():
    before = torch.mlu.current_device()
    torch.mlu.set_device(1)
    on_default = str(torch.ones(1, device="mlu").device)
    torch.mlu.set_device(0)
    with torch.mlu.device(1):
        inside = torch.mlu.current_device()
    return {
        "before": before,
        "default_after_set": on_default,
        "inside": inside,
        "after": torch.mlu.current_device(),
        "count": torch.mlu.device_count(),
        "bad_index": raises(lambda: torch.ones(1, device="mlu:5")),
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
    mlu, grad_device = _train("mlu")
    cpu, _ = _train("cpu")
    return {"mlu": mlu, "cpu": cpu, "grad_device": grad_device}


@check
def cross_device():
    a = torch.ones(3, device="mlu")
    return {
        "cpu_tensor": raises(lambda: a + torch.ones(3)),
        "cpu_first": raises(lambda: torch.ones(3) * a),
        "other_mlu": raises(lambda: a + torch.ones(3, device="mlu:1")),
        "matmul_cpu": raises(lambda: torch.ones(2, 3, device="mlu") @ torch.ones(3, 2)),
        "cuda": raises(lambda: a + torch.ones(3, device="cuda")),
        "cpu_scalar_ok": (a * torch.tensor(2.0)).cpu().tolist(),
        "cpu_index_ok": torch.arange(5.0, device="mlu")[torch.tensor([0, 3])].cpu().tolist(),
    }


@check
def out_arguments():
    import warnings

    x = torch.arange(6.0, device="mlu").reshape(2, 3)
    empty = torch.empty(0, device="mlu")
    torch.add(x, x, out=empty)
    exact = torch.empty(2, 3, device="mlu")
    exact_ptr = exact.data_ptr()
    torch.mul(x, 2, out=exact)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wrong = torch.empty(2, device="mlu")
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
    model = torch.nn.Linear(4, 2).mlu()
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    plain = torch.load(io.BytesIO(buf.getvalue()))
    to_cpu = torch.load(io.BytesIO(buf.getvalue()), map_location="cpu")
    to_one = torch.load(io.BytesIO(buf.getvalue()), map_location="mlu:1")
    return {
        "plain": str(plain["weight"].device),
        "cpu": str(to_cpu["weight"].device),
        "mlu1": str(to_one["weight"].device),
        "equal": torch.equal(to_cpu["weight"], model.weight.detach().cpu()),
    }


@check
def rng():
    torch.manual_seed(123)
    first = torch.randn(4, device="mlu").cpu()
    torch.manual_seed(123)
    again = torch.randn(4, device="mlu").cpu()
    state = torch.mlu.get_rng_state()
    x = torch.rand(4, device="mlu").cpu()
    torch.mlu.set_rng_state(state)
    y = torch.rand(4, device="mlu").cpu()
    torch.mlu.manual_seed(5)
    cpu_before = torch.get_rng_state()
    torch.rand(4, device="mlu")
    via_submodule = torch.equal(torch.mlu.random.get_rng_state(), torch.mlu.get_rng_state())
    return {
        "seed_repeats": torch.equal(first, again),
        "state_restores": torch.equal(x, y),
        "random_submodule": via_submodule,
        "all_states": len(torch.mlu.random.get_rng_state_all()),
        "cpu_stream_untouched": torch.equal(cpu_before, torch.get_rng_state()),
        "state_type": str(state.dtype),
    }


@check
def autocast():
    lin = torch.nn.Linear(4, 4).mlu()
    x = torch.randn(2, 4, device="mlu")
    with torch.autocast("mlu", dtype=torch.bfloat16):
        bf = lin(x)
        soft = torch.softmax(bf, -1)
    with torch.mlu.amp.autocast(dtype=torch.float16):
        fp = lin(x)
    scaler = torch.mlu.amp.GradScaler()
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    before = lin.weight.detach().cpu().clone()
    with torch.autocast("mlu", dtype=torch.float16):
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
        "amp_dtypes": [str(d) for d in torch.mlu.get_amp_supported_dtype()],
    }


@check
def streams_events():
    start, end = torch.mlu.Event(enable_timing=True), torch.mlu.Event(enable_timing=True)
    start.record()
    torch.randn(64, 64, device="mlu") @ torch.randn(64, 64, device="mlu")
    end.record()
    torch.mlu.synchronize()
    s = torch.mlu.Stream()
    with torch.mlu.stream(s):
        pass
    return {
        "elapsed": start.elapsed_time(end),
        "query": end.query(),
        "stream_device": str(s.device),
        "current_stream": str(torch.mlu.current_stream().device),
    }


@check
def memory():
    torch.mlu.reset_peak_memory_stats()
    base = torch.mlu.memory_allocated()
    big = torch.empty(1024, 1024, device="mlu")  # 4 MiB
    grown = torch.mlu.memory_allocated() - base
    del big
    after = torch.mlu.memory_allocated() - base
    stats = torch.mlu.memory_stats()
    free, total = torch.mlu.mem_get_info()
    return {
        "grown": grown,
        "after_free": after,
        "peak_minus_base": torch.mlu.max_memory_allocated() - base,
        "reserved_ge_allocated": torch.mlu.memory_reserved() >= torch.mlu.memory_allocated(),
        "stats_keys": sorted(stats)[:3],
        "free_le_total": 0 < free <= total,
        "other_device": torch.mlu.memory_allocated(1) >= 0,
    }


@check
def api_list():
    missing = raises(lambda: torch.mlu.nvtx)
    return {
        "has_memory_snapshot": hasattr(torch.mlu, "memory_snapshot"),
        "has_nvtx": hasattr(torch.mlu, "nvtx"),
        "nvtx_error": missing,
        "has_graph_stub": hasattr(torch.mlu, "MLUGraph"),
        "graph_error": raises(lambda: torch.mlu.MLUGraph()),
        "amp_grad_scaler": hasattr(torch.mlu.amp, "GradScaler"),
        "bf16": torch.mlu.is_bf16_supported(),
        "version": torch_mlu.__version__,
    }


print(json.dumps(results))
sys.stdout.flush()
