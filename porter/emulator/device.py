"""The `torch.mlu` module of the emulated torch_mlu, restricted to one vendor API list.

`torch.mlu.<name>` exists only when the chosen torch_mlu line lists it (apis.py); any other
name raises AttributeError naming the API and the version, so `hasattr` answers as on the
real package and code that leans on a newer API fails here, not on the cluster.
"""

from __future__ import annotations

import contextlib
import time
import types
from collections import namedtuple
from typing import Any

import torch

from porter.emulator import apis
from porter.emulator.memory import TOTAL_MEMORY, Memory

DeviceProperties = namedtuple("DeviceProperties", "name major minor total_memory multi_processor_count")


class RestrictedModule(types.ModuleType):
    """A module holding only the allowed names; the rest raise AttributeError."""

    def __init__(self, name: str, version: str, prefix: str = "") -> None:
        super().__init__(name)
        self._porter_version = version
        self._porter_prefix = prefix

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        api = f"torch.mlu.{self._porter_prefix}{name}"
        raise AttributeError(
            f"{api} is not available in torch_mlu for torch {self._porter_version} "
            f"(not in the vendor API list; emulated by porter)"
        )


def _not_implemented(api: str):
    """A listed API the emulator cannot honour: present, but says so when used."""

    def stub(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{api} is listed for torch_mlu but not emulated by porter")

    stub.__name__ = api.rsplit(".", 1)[1]
    return stub


class _Timer:
    """Event: work is synchronous, so an event is complete when recorded; times in ms."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        self.enable_timing = enable_timing
        self._at: float | None = None

    def record(self, stream: Any = None) -> None:
        self._at = time.perf_counter()

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def wait(self, stream: Any = None) -> None:
        pass

    def elapsed_time(self, end: "_Timer") -> float:
        if self._at is None or end._at is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end._at - self._at) * 1000.0

    def ipc_handle(self) -> bytes:
        return b""

    @classmethod
    def from_ipc_handle(cls, device: Any, handle: bytes) -> "_Timer":
        return cls()


class _Stream:
    """One synchronous stream per device."""

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        self.device = torch.device("mlu", _index(device))
        self.priority = priority

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def wait_event(self, event: Any) -> None:
        pass

    def wait_stream(self, stream: Any) -> None:
        pass

    def record_event(self, event: Any = None) -> Any:
        event = event or _Timer()
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Stream) and other.device == self.device

    def __hash__(self) -> int:
        return hash(self.device)


_EXT: Any = None


def _index(device: Any = None) -> int:
    if device is None:
        return int(_EXT.current_device())
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "mlu":
            raise ValueError(f"Expected an mlu device, got {device}")
        return int(_EXT.current_device()) if device.index is None else device.index
    if isinstance(device, _Stream):
        return device.device.index
    raise ValueError(f"Expected an mlu device, got {device!r}")


class _DeviceContext:
    """torch.mlu.device(i): makes i current inside the block."""

    def __init__(self, device: Any) -> None:
        self.idx = -1 if device is None else _index(device)
        self.prev = -1

    def __enter__(self) -> None:
        if self.idx >= 0:
            self.prev = int(_EXT.current_device())
            _EXT.set_device(self.idx)

    def __exit__(self, *exc: Any) -> None:
        if self.prev >= 0:
            _EXT.set_device(self.prev)


def _generator(device: Any = "mlu") -> torch.Generator:
    return _EXT.default_generator(_index(device))


def _functions(ext: Any, version: str) -> dict[str, Any]:
    """Every torch.mlu name the emulator implements, before the list restricts them."""
    memory = Memory(ext, _index)
    count = lambda: int(ext.device_count())  # noqa: E731

    def manual_seed(seed: int) -> None:
        _generator().manual_seed(int(seed))

    def manual_seed_all(seed: int) -> None:
        for i in range(count()):
            ext.default_generator(i).manual_seed(int(seed))

    def seed() -> None:
        _generator().seed()

    def seed_all() -> None:
        for i in range(count()):
            ext.default_generator(i).seed()

    def get_rng_state(device: Any = "mlu") -> torch.Tensor:
        return _generator(device).get_state()

    def set_rng_state(new_state: torch.Tensor, device: Any = "mlu") -> None:
        _generator(device).set_state(new_state.cpu())

    def get_device_properties(device: Any = None) -> DeviceProperties:
        _index(device)
        return DeviceProperties("MLU370-X8 (emulated by porter)", 3, 0, TOTAL_MEMORY, 64)

    def set_device(device: Any) -> None:
        index = _index(device)
        if index >= 0:  # torch.cuda.set_device(-1) is a no-op; so is this
            ext.set_device(index)

    @contextlib.contextmanager
    def stream(s: Any = None):
        yield  # one synchronous stream per device: nothing to switch

    fns: dict[str, Any] = {
        "is_available": lambda: count() > 0,
        "device_count": count,
        "current_device": lambda: int(ext.current_device()),
        "set_device": set_device,
        "device": _DeviceContext,
        "device_of": lambda obj: _DeviceContext(obj.get_device() if obj.device.type == "mlu" else -1),
        "_get_device_index": lambda device=None, optional=False, allow_cpu=False: _index(device),
        "synchronize": lambda device=None: None,
        "is_initialized": lambda: True,
        "init": lambda: None,
        "_lazy_init": lambda: None,
        "_is_in_bad_fork": lambda: False,
        "_is_compiled": lambda: True,
        "ipc_collect": lambda: None,
        "empty_cache": lambda: None,
        "can_device_access_peer": lambda device, peer: True,
        "get_amp_supported_dtype": lambda: [torch.float16, torch.bfloat16, torch.float32],
        "is_bf16_supported": lambda *a, **k: True,
        "get_autocast_dtype": lambda: torch.get_autocast_dtype("mlu"),
        "is_autocast_enabled": lambda: torch.is_autocast_enabled("mlu"),
        "get_device_name": lambda device=None: get_device_properties(device).name,
        "get_device_capability": lambda device=None: (3, 0),
        "get_device_properties": get_device_properties,
        "manual_seed": manual_seed,
        "manual_seed_all": manual_seed_all,
        "seed": seed,
        "seed_all": seed_all,
        "initial_seed": lambda: _generator().initial_seed(),
        "get_rng_state": get_rng_state,
        "set_rng_state": set_rng_state,
        "get_rng_state_all": lambda: [get_rng_state(i) for i in range(count())],
        "set_rng_state_all": lambda states: [set_rng_state(s, i) for i, s in enumerate(states)] and None,
        "Stream": _Stream,
        "ExternalStream": _not_implemented("torch.mlu.ExternalStream"),
        "StreamContext": lambda s: stream(s),
        "Event": _Timer,
        "current_stream": lambda device=None: _Stream(device),
        "default_stream": lambda device=None: _Stream(device),
        "set_stream": lambda s: None,
        "stream": stream,
        "OutOfMemoryError": torch.OutOfMemoryError,
        "memory_allocated": memory.memory_allocated,
        "max_memory_allocated": memory.max_memory_allocated,
        "memory_reserved": memory.memory_reserved,
        "max_memory_reserved": memory.max_memory_reserved,
        "memory_cached": memory.memory_reserved,
        "max_memory_cached": memory.max_memory_reserved,
        "reset_peak_memory_stats": memory.reset_peak_memory_stats,
        "reset_max_memory_allocated": memory.reset_peak_memory_stats,
        "reset_max_memory_cached": memory.reset_peak_memory_stats,
        "mem_get_info": memory.mem_get_info,
        "memory_stats": memory.memory_stats,
        "memory_summary": memory.memory_summary,
        "memory_snapshot": lambda: [],
        "set_per_process_memory_fraction": memory.set_per_process_memory_fraction,
    }
    for name in (
        "MLUGraph",
        "graph",
        "graph_pool_handle",
        "make_graphed_callables",
        "MLUPluggableAllocator",
        "change_current_allocator",
        "caching_allocator_alloc",
        "caching_allocator_delete",
    ):
        fns[name] = _not_implemented(f"torch.mlu.{name}")
    return fns


def _amp(version: str) -> types.ModuleType:
    amp = RestrictedModule("torch.mlu.amp", version, "amp.")

    class autocast(torch.amp.autocast_mode.autocast):
        """torch.mlu.amp.autocast: torch.autocast("mlu") with CUDA's old signature."""

        def __init__(
            self, enabled: bool = True, dtype: torch.dtype = torch.float16, cache_enabled: bool = True
        ) -> None:
            super().__init__("mlu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class GradScaler(torch.amp.GradScaler):
        def __init__(
            self,
            init_scale: float = 2.0**16,
            growth_factor: float = 2.0,
            backoff_factor: float = 0.5,
            growth_interval: int = 2000,
            enabled: bool = True,
        ) -> None:
            super().__init__(
                "mlu",
                init_scale=init_scale,
                growth_factor=growth_factor,
                backoff_factor=backoff_factor,
                growth_interval=growth_interval,
                enabled=enabled,
            )

    import functools

    found = {
        "autocast": autocast,
        "GradScaler": GradScaler,
        "custom_fwd": functools.partial(torch.amp.custom_fwd, device_type="mlu"),
        "custom_bwd": functools.partial(torch.amp.custom_bwd, device_type="mlu"),
    }
    for name, value in found.items():
        if apis.allowed(version, f"amp.{name}"):
            setattr(amp, name, value)
    return amp


def build_module(ext: Any, version: str) -> RestrictedModule:
    """torch.mlu for one torch_mlu line."""
    global _EXT
    _EXT = ext
    module = RestrictedModule("torch.mlu", version)
    allowed = apis.top_level(version)
    for name, value in _functions(ext, version).items():
        if name in allowed or name.startswith("_"):
            setattr(module, name, value)
    module.amp = _amp(version)
    mem = RestrictedModule("torch.mlu.memory", version, "memory.")
    for name in ("_snapshot", "_record_memory_history", "_dump_snapshot"):
        if apis.allowed(version, f"memory.{name}"):
            setattr(mem, name, (lambda *a, **k: {}) if name == "_snapshot" else (lambda *a, **k: None))
    for name in (
        "memory_allocated",
        "max_memory_allocated",
        "memory_reserved",
        "max_memory_reserved",
        "reset_peak_memory_stats",
        "mem_get_info",
        "memory_stats",
        "empty_cache",
    ):
        if hasattr(module, name):
            setattr(mem, name, getattr(module, name))
    module.memory = mem
    rng = RestrictedModule("torch.mlu.random", version, "random.")
    for name in (
        "get_rng_state",
        "set_rng_state",
        "get_rng_state_all",
        "set_rng_state_all",
        "manual_seed",
        "manual_seed_all",
        "seed",
        "seed_all",
        "initial_seed",
    ):
        setattr(rng, name, getattr(module, name))
    module.random = rng
    if "cnpx" in allowed:
        cnpx = RestrictedModule("torch.mlu.cnpx", version, "cnpx.")
        cnpx.mark = lambda msg: None
        cnpx.range_push = lambda msg: 0
        cnpx.range_pop = lambda: 0
        module.cnpx = cnpx
    # Listed names the emulator does not implement yet still exist, and say so when used.
    for name in apis.top_level(version):
        if name not in module.__dict__:
            setattr(module, name, _not_implemented(f"torch.mlu.{name}"))
    return module
