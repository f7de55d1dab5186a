"""Which `torch.<device>` names an emulated vendor package exposes: the vendor's API list.

Read from porter's op tables (op_tables/<target>/torch_api_<version>.json), where every
`torch.mlu.*` (`torch.npu.*`, or `torch_npu.npu.*`) entry is the device counterpart of a
listed CUDA API. A name is exposed when the vendor marks it supported or partial; anything
else raises AttributeError, as an older vendor package would. A target with no table yet
has no restriction: its module holds every name the emulator implements (version None).
"""

from __future__ import annotations

import json
from functools import lru_cache

from porter.core.datafiles import data_dir

# Names torch, transformers and accelerate call on any device module, whatever the list
# says: without them `torch.autocast("mlu")`, `torch.manual_seed` or Trainer break before
# the user's code runs. They exist on every real torch_mlu and torch_npu.
ALWAYS = frozenset(
    {
        "_is_in_bad_fork",
        "_lazy_init",
        "_is_compiled",
        "is_available",
        "device_count",
        "current_device",
        "set_device",
        "manual_seed",
        "manual_seed_all",
        "get_rng_state",
        "set_rng_state",
        "get_rng_state_all",
        "set_rng_state_all",
        "initial_seed",
        "seed",
        "seed_all",
        "get_amp_supported_dtype",
        "is_bf16_supported",
        "synchronize",
        "device",
        "current_stream",
        "default_stream",
        "Stream",
        "Event",
        "amp",
        "memory",
        "is_initialized",
        "empty_cache",
        "memory_allocated",
        "max_memory_allocated",
        "reset_peak_memory_stats",
        "get_device_name",
        "get_device_properties",
        "get_device_capability",
        "mem_get_info",
        "StreamContext",
        "stream",
        "OutOfMemoryError",
        "init",
        "_get_device_index",
        "get_autocast_dtype",
        "is_autocast_enabled",
        # A submodule of every torch_mlu (as torch.cuda.random); the list names its functions at
        # torch.mlu level only. transformers' Trainer saves checkpoints through it.
        "random",
    }
)
# Names a vendor module has that mirror nothing of torch.cuda, so that no list of CUDA APIs
# holds them: torch_npu's compile switch, which LLaMA-Factory sets on every NPU run
# (hparams/parser.py: torch.npu.set_compile_mode(jit_compile=False)).
OWN = {"mlu": frozenset(), "npu": frozenset({"set_compile_mode", "is_jit_compile_false"})}


def _prefixes(target: str) -> tuple[str, ...]:
    # torch_npu's list writes its names as torch_npu.npu.X; both spellings are one module.
    return (f"torch.{target}.", f"torch_{target}.{target}.")


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))


def versions(target: str = "mlu") -> list[str]:
    """The lines of the vendor package that have an API list, oldest first."""
    folder = data_dir("op_tables") / target
    found = [p.stem.rsplit("_", 1)[1] for p in folder.glob("torch_api_*.json")] if folder.is_dir() else []
    return sorted(found, key=_key)


def default_version(target: str = "mlu") -> str | None:
    """The newest line with a list, or None when the target has none (no restriction)."""
    known = versions(target)
    return known[-1] if known else None


@lru_cache(maxsize=None)
def listed(version: str, target: str = "mlu") -> frozenset[str]:
    """Every `torch.<target>.*` name (without the prefix) the list marks supported or partial,
    dotted for nested ones ("amp.GradScaler", "Event.record")."""
    path = data_dir("op_tables") / target / f"torch_api_{version}.json"
    if not path.is_file():
        known = ", ".join(versions(target)) or "none"
        raise ValueError(f"no torch_{target} API list for version {version!r} ({path}); known: {known}")
    entries = json.loads(path.read_text(encoding="utf-8"))["entries"]
    names = set()
    for name, entry in entries.items():
        if entry.get("status") not in ("supported", "partial"):
            continue
        for prefix in _prefixes(target):
            if name.startswith(prefix):
                names.add(name[len(prefix) :])
    return frozenset(names)


def allowed(version: str | None, name: str, target: str = "mlu") -> bool:
    """Whether `torch.<target>.<name>` exists on this line (name may be dotted); every name
    does where there is no list (version None)."""
    if version is None:
        return True
    return name in ALWAYS or name in OWN.get(target, frozenset()) or name in listed(version, target)


def top_level(version: str | None, target: str = "mlu") -> frozenset[str]:
    """The first parts of the listed names (empty without a list: nothing to stub)."""
    if version is None:
        return frozenset()
    return frozenset(n.split(".", 1)[0] for n in listed(version, target)) | ALWAYS | OWN.get(target, frozenset())
