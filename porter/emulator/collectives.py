"""The emulated vendor collectives ("cncl" for mlu, "hccl" for npu): gloo collectives on
zero-copy CPU views of the device's tensors.

A Python ProcessGroup subclass (subclassing the C++ CNCL or HCCL group is impossible from
Python); torch.distributed returns it as the group itself. One class serves every target:
register() makes a subclass named for the backend, which knows its device. Like the real
libraries it refuses CPU tensors and the reductions the library lacks (targets.py: CNCL has
no BAND, BOR, BXOR, PREMUL_SUM; HCCL no AVG either).
"""

from __future__ import annotations

import atexit
import ctypes
import functools
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

from porter.emulator.targets import MLU, EmulatedDevice

_EXT: Any = None
_DEV: EmulatedDevice = MLU  # the device this process emulates (register sets it)


def _cpu(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.device.type != _DEV.name:
        raise ValueError(f"Tensors must be {_DEV.label} and dense ({_DEV.backend} got a tensor on {tensor.device})")
    return _EXT.share_as_cpu(tensor)


def _cpus(tensors: list) -> list:
    return [_cpu(t) for t in tensors]


def _stacked(whole: torch.Tensor, part: torch.Tensor) -> torch.Tensor:
    """`whole` (world_size parts) shaped as gloo wants it: the parts stacked along dim 0
    (world*d0, d1, ...). NCCL, and so CNCL and HCCL, take any shape with the right number of elements
    (accelerate's gather passes a flat output for a (1, n) input); gloo checks the shape."""
    return whole.view(-1, *part.shape[1:]) if whole.is_contiguous() and part.numel() else whole


def _one_d(tensor: torch.Tensor) -> torch.Tensor:
    """A 0-dim tensor as one element (gloo cannot gather scalars into a tensor; NCCL can)."""
    return tensor.view(1) if not tensor.dim() else tensor


def _check_op(opts: Any) -> None:
    op = getattr(opts, "reduceOp", None)
    name = str(getattr(op, "op", op)).rsplit(".", 1)[-1] if op is not None else ""
    if name in _DEV.unsupported_reductions:
        raise ValueError(f"{_DEV.backend} does not support the reduction {name}")


def _in_turn(works: list) -> Any:
    """One Work for collectives gloo has no coalesced form of (DTensor's redistribution calls
    them): every one but the last is waited for here, the last is the caller's to wait on."""
    for work in works[:-1]:
        work.wait()
    return works[-1]


# Every Work handed out that a gloo worker thread may still hold (see _tracked).
_WORKS: list = []
_PRUNE_AT = 64


def _tracked(method: Callable[..., Any]) -> Callable[..., Any]:
    """A collective whose Work is kept until gloo has let go of it, and past the end of the process.

    The Work holds the collective's tensors, which are Python-made (CPU views of the device's
    tensors; real CNCL and HCCL have none): the last owner to let go of the Work decrefs them,
    and needs the GIL. When that owner is gloo's worker thread, finishing its loop a moment
    after the caller saw the collective complete, and the interpreter has begun to shut down,
    the thread cannot take the GIL: CPython ends it inside the Work's destructor, and the C++
    runtime aborts the process ("terminate called without an active exception", exit -6, after
    every collective succeeded: ~1 run in 20 of two emulated ranks). So porter holds every
    Work gloo may still hold: a Work is let go (here, under the GIL) only once nothing but its
    Python object owns it, and at exit the rest are kept for good (_hold_at_exit), so a
    gloo thread is never the last owner once the interpreter shuts down."""

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        global _PRUNE_AT
        work = method(*args, **kwargs)
        _WORKS.append(work)
        if len(_WORKS) >= _PRUNE_AT:
            _let_go()
            _PRUNE_AT = max(64, 2 * len(_WORKS))  # amortized: a prune per as many calls as it kept
        return work

    return call


def _let_go() -> None:
    """Let go of the Works only their Python object owns (the count of 2 includes the call
    that counts): gloo is done with them, so whoever lets go last is a Python thread."""
    _WORKS[:] = [w for w in _WORKS if _EXT.work_owners(w) > 2]


def _hold_at_exit() -> None:
    """Keep the Works gloo may still hold through interpreter shutdown (an atexit hook, which
    runs before CPython stops handing the GIL to other threads)."""
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(_WORKS))


def _keep_until_exit(gloo: Any) -> None:
    """Never destroy the gloo group before the process ends. Its destructor joins its worker
    threads while the caller holds the GIL, and a worker that is releasing a finished
    collective's tensors needs the GIL: they are Python-made CPU views of the device's
    tensors, which real CNCL and HCCL do not have. The process hung when the last reference went (DDP's
    reducer freed at the end of a 2-device LoRA run: rank 1 stuck in ~ProcessGroupGloo's
    join, its gloo thread in a tensor's decref). A reference Python never gives back keeps
    it alive; the threads end with the process."""
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(gloo))


class EmulatedProcessGroup(dist.ProcessGroup):
    """The vendor's process group on gloo; register() names a subclass per backend."""

    def __init__(self, store: Any, rank: int, size: int, timeout: timedelta) -> None:
        super().__init__(rank, size)
        self._gloo = dist.ProcessGroupGloo(store, rank, size, timeout)
        # torch returns a Python group as it is, with no backend attached: its device list was
        # empty, so object collectives chose "cpu" (and met our CPU check), and the group's
        # name, which C++ keeps on the backends, could not be set (device meshes failed
        # with "ProcessGroup name not set"). Attached for the device as ProcessGroupNCCL is for
        # "cuda": objects travel as tensors on the current device. Collectives still come
        # here; torch's C++ calls the group's methods, which this class overrides.
        self._register_backend(torch.device(_DEV.name), dist.ProcessGroup.BackendType.CUSTOM, self._gloo)
        _keep_until_exit(self._gloo)

    def getBackendName(self) -> str:  # noqa: N802 (torch's name)
        return _DEV.backend

    @property
    def name(self) -> str:  # type: ignore[override]
        return _DEV.backend

    @_tracked
    def allreduce(self, tensors, opts=None):
        opts = opts or dist.AllreduceOptions()
        _check_op(opts)
        return self._gloo.allreduce(_cpus(tensors), opts)

    @_tracked
    def allreduce_coalesced(self, tensors, opts=None):
        return self._gloo.allreduce_coalesced(_cpus(tensors), opts or dist.AllreduceCoalescedOptions())

    @_tracked
    def broadcast(self, tensors, opts=None):
        return self._gloo.broadcast(_cpus(tensors), opts or dist.BroadcastOptions())

    @_tracked
    def reduce(self, tensors, opts=None):
        opts = opts or dist.ReduceOptions()
        _check_op(opts)
        return self._gloo.reduce(_cpus(tensors), opts)

    @_tracked
    def allgather(self, output_lists, inputs, opts=None):
        return self._gloo.allgather([_cpus(o) for o in output_lists], _cpus(inputs), opts or dist.AllgatherOptions())

    @_tracked
    def _allgather_base(self, output, input, opts=None):
        part = _one_d(_cpu(input))
        return self._gloo._allgather_base(_stacked(_cpu(output), part), part, opts or dist.AllgatherOptions())

    def all_gather_single(self, output, input, opts=None):
        return self._allgather_base(output, input, opts)

    def allgather_into_tensor_coalesced(self, outputs, inputs, opts=None):
        return _in_turn([self._allgather_base(o, i, opts) for o, i in zip(outputs, inputs)])

    all_gather_single_coalesced = allgather_into_tensor_coalesced

    @_tracked
    def reduce_scatter(self, outputs, input_lists, opts=None):
        opts = opts or dist.ReduceScatterOptions()
        _check_op(opts)
        return self._gloo.reduce_scatter(_cpus(outputs), [_cpus(i) for i in input_lists], opts)

    @_tracked
    def _reduce_scatter_base(self, output, input, opts=None):
        opts = opts or dist.ReduceScatterOptions()
        _check_op(opts)
        part = _one_d(_cpu(output))
        return self._gloo._reduce_scatter_base(part, _stacked(_cpu(input), part), opts)

    def reduce_scatter_single(self, output, input, opts=None):
        return self._reduce_scatter_base(output, input, opts)

    def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts=None):
        return _in_turn([self._reduce_scatter_base(o, i, opts) for o, i in zip(outputs, inputs)])

    reduce_scatter_single_coalesced = reduce_scatter_tensor_coalesced

    @_tracked
    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        return self._gloo.alltoall_base(
            _cpu(output), _cpu(input), output_split_sizes, input_split_sizes, opts or dist.AllToAllOptions()
        )

    def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        return self.alltoall_base(output, input, output_split_sizes, input_split_sizes, opts)

    @_tracked
    def alltoall(self, outputs, inputs, opts=None):
        return self._gloo.alltoall(_cpus(outputs), _cpus(inputs), opts or dist.AllToAllOptions())

    @_tracked
    def gather(self, output_lists, inputs, opts=None):
        return self._gloo.gather([_cpus(o) for o in output_lists], _cpus(inputs), opts or dist.GatherOptions())

    @_tracked
    def scatter(self, outputs, input_lists, opts=None):
        return self._gloo.scatter(_cpus(outputs), [_cpus(i) for i in input_lists], opts or dist.ScatterOptions())

    @_tracked
    def send(self, tensors, dst, tag=0):
        return self._gloo.send(_cpus(tensors), dst, tag)

    @_tracked
    def recv(self, tensors, src, tag=0):
        return self._gloo.recv(_cpus(tensors), src, tag)

    @_tracked
    def recv_anysource(self, tensors, tag=0):
        return self._gloo.recv_anysource(_cpus(tensors), tag)

    @_tracked
    def barrier(self, opts=None):
        return self._gloo.barrier(opts or dist.BarrierOptions())


def group_class(device: EmulatedDevice) -> type[EmulatedProcessGroup]:
    """The group class for a device, named as the vendor's (CnclProcessGroup, HcclProcessGroup)."""
    return type(f"{device.backend.capitalize()}ProcessGroup", (EmulatedProcessGroup,), {})


def register(ext: Any, device: EmulatedDevice = MLU) -> None:
    """Register the device's backend ("cncl", "hccl") with torch.distributed, once."""
    global _EXT, _DEV
    if _EXT is None:
        atexit.register(_hold_at_exit)
    _EXT, _DEV = ext, device
    if device.backend.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(device.backend, group_class(device), devices=[device.name])
