"""The `torch.<device>` module of an emulated vendor package (torch.mlu, torch.npu),
restricted to one vendor API list.

`torch.mlu.<name>` exists only when the chosen torch_mlu line lists it (apis.py); any other
name raises AttributeError naming the API and the version, so `hasattr` answers as on the
real package and code that leans on a newer API fails here, not on the cluster. One process
emulates one device (PrivateUse1 has one name per process): build_module records which.
"""

from __future__ import annotations

import contextlib
import os
import time
import types
from collections import namedtuple
from typing import Any

import torch

from porter.emulator import apis
from porter.emulator.memory import Memory
from porter.emulator.targets import MLU, EmulatedDevice


class RestrictedModule(types.ModuleType):
    """A module holding only the allowed names; the rest raise AttributeError."""

    def __init__(self, name: str, version: str | None, prefix: str = "", device: EmulatedDevice = MLU) -> None:
        super().__init__(name)
        self._porter_version = version
        self._porter_prefix = prefix
        self._porter_device = device

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        device = self._porter_device
        api = f"torch.{device.name}.{self._porter_prefix}{name}"
        if self._porter_version is None:  # no list to check against: the emulator lacks it
            raise AttributeError(f"{api}: porter's emulated {device.package} does not implement it")
        raise AttributeError(
            f"{api} is not available in {device.package} for torch {self._porter_version} "
            f"(not in the vendor API list; emulated by porter)"
        )


def _not_implemented(api: str):
    """A listed API the emulator cannot honour: present, but says so when used."""

    def stub(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{api} is listed for {_DEV.package} but not emulated by porter")

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
        self.device = torch.device(_DEV.name, _index(device))
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
_DEV: EmulatedDevice = MLU  # the device this process emulates (build_module sets it)


def _index(device: Any = None) -> int:
    if device is None:
        return int(_EXT.current_device())
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != _DEV.name:
            raise ValueError(f"Expected an {_DEV.name} device, got {device}")
        return int(_EXT.current_device()) if device.index is None else device.index
    if isinstance(device, _Stream):
        return device.device.index
    raise ValueError(f"Expected an {_DEV.name} device, got {device!r}")


class _DeviceContext:
    """torch.<device>.device(i): makes i current inside the block."""

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


def _generator(device: Any = None) -> torch.Generator:
    return _EXT.default_generator(_index(device))


def _capability(device: EmulatedDevice) -> tuple[int, int] | None:
    """get_device_capability's answer: the vendor's, or "major.minor" from its variable."""
    raw = os.environ.get(device.capability_variable or "", "").strip()
    if raw:
        major, _, minor = raw.partition(".")
        try:
            return int(major), int(minor or 0)
        except ValueError:
            raise ValueError(f"{device.capability_variable}={raw!r} is not major.minor, e.g. 8.0") from None
    return device.capability


def _functions(ext: Any, version: str | None) -> dict[str, Any]:
    """Every torch.<device> name the emulator implements, before the list restricts them."""
    dev = _DEV
    memory = Memory(ext, _index, dev)
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

    def get_rng_state(device: Any = None) -> torch.Tensor:
        return _generator(device).get_state()

    def set_rng_state(new_state: torch.Tensor, device: Any = None) -> None:
        _generator(device).set_state(new_state.cpu())

    # A record with the vendor's fields, as its own properties class has them.
    fields = ("name", "total_memory", *(key for key, _ in dev.properties))
    properties = namedtuple(f"{dev.label}DeviceProperties", fields)  # type: ignore[misc]
    values = (f"{dev.card} (emulated by porter)", dev.total_memory, *(v for _, v in dev.properties))

    def get_device_properties(device: Any = None) -> Any:
        _index(device)
        return properties._make(values)

    def get_device_capability(device: Any = None) -> tuple[int, int] | None:
        _index(device)
        return _capability(dev)

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
        "device_of": lambda obj: _DeviceContext(obj.get_device() if obj.device.type == dev.name else -1),
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
        "get_autocast_dtype": lambda: torch.get_autocast_dtype(dev.name),
        "is_autocast_enabled": lambda: torch.is_autocast_enabled(dev.name),
        "get_device_name": lambda device=None: get_device_properties(device).name,
        "get_device_capability": get_device_capability,
        # torch_npu's graph-mode switch: eager is what the emulator runs either way.
        "set_compile_mode": lambda jit_compile=False: None,
        "is_jit_compile_false": lambda: True,
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
        "ExternalStream": _not_implemented(f"torch.{dev.name}.ExternalStream"),
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
        dev.graph_class,
        "graph",
        "graph_pool_handle",
        "make_graphed_callables",
        dev.pluggable_allocator,
        "change_current_allocator",
        "caching_allocator_alloc",
        "caching_allocator_delete",
    ):
        fns[name] = _not_implemented(f"torch.{dev.name}.{name}")
    return fns


def _amp(version: str | None) -> types.ModuleType:
    name = _DEV.name
    amp = RestrictedModule(f"torch.{name}.amp", version, "amp.", _DEV)

    class autocast(torch.amp.autocast_mode.autocast):
        """torch.<device>.amp.autocast: torch.autocast(<device>) with CUDA's old signature."""

        def __init__(
            self, enabled: bool = True, dtype: torch.dtype = torch.float16, cache_enabled: bool = True
        ) -> None:
            super().__init__(name, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

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
                name,
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
        "custom_fwd": functools.partial(torch.amp.custom_fwd, device_type=name),
        "custom_bwd": functools.partial(torch.amp.custom_bwd, device_type=name),
    }
    for key, value in found.items():
        if apis.allowed(version, f"amp.{key}", name):
            setattr(amp, key, value)
    return amp


def build_module(ext: Any, version: str | None, device: EmulatedDevice = MLU) -> RestrictedModule:
    """torch.<device> for one line of the vendor package (version None: no API list)."""
    global _EXT, _DEV
    _EXT, _DEV = ext, device
    name = device.name

    def restricted(sub: str) -> RestrictedModule:
        return RestrictedModule(f"torch.{name}.{sub}", version, f"{sub}.", device)

    module = RestrictedModule(f"torch.{name}", version, "", device)
    exposed = apis.top_level(version, name)
    for key, value in _functions(ext, version).items():
        if version is None or key in exposed or key.startswith("_"):
            setattr(module, key, value)
    module.amp = _amp(version)
    mem = restricted("memory")
    for key in ("_snapshot", "_record_memory_history", "_dump_snapshot"):
        if apis.allowed(version, f"memory.{key}", name):
            setattr(mem, key, (lambda *a, **k: {}) if key == "_snapshot" else (lambda *a, **k: None))
    for key in (
        "memory_allocated",
        "max_memory_allocated",
        "memory_reserved",
        "max_memory_reserved",
        "reset_peak_memory_stats",
        "mem_get_info",
        "memory_stats",
        "empty_cache",
    ):
        if hasattr(module, key):
            setattr(mem, key, getattr(module, key))
    module.memory = mem
    rng = restricted("random")
    for key in (
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
        setattr(rng, key, getattr(module, key))
    module.random = rng
    if "cnpx" in exposed:  # Cambricon's NVTX
        cnpx = restricted("cnpx")
        cnpx.mark = lambda msg: None
        cnpx.range_push = lambda msg: 0
        cnpx.range_pop = lambda: 0
        module.cnpx = cnpx
    # Listed names the emulator does not implement yet still exist, and say so when used.
    for key in exposed:
        if key not in module.__dict__:
            setattr(module, key, _not_implemented(f"torch.{name}.{key}"))
    return module
