"""Which `torch.mlu` names the emulated torch_mlu line exposes: the vendor's API list.

Read from porter's op tables (op_tables/mlu/torch_api_<version>.json), where every
`torch.mlu.*` entry is the MLU counterpart of a listed CUDA API. A name is exposed when
the vendor marks it supported or partial; anything else raises AttributeError, as an
older torch_mlu would.
"""

from __future__ import annotations

import json
from functools import lru_cache

from porter.core.datafiles import data_dir

PREFIX = "torch.mlu."
DEFAULT_VERSION = "2.4"

# Names torch, transformers and accelerate call on any device module, whatever the list
# says: without them `torch.autocast("mlu")`, `torch.manual_seed` or Trainer break before
# the user's code runs. They exist on every real torch_mlu.
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


def versions() -> list[str]:
    return sorted(p.stem.rsplit("_", 1)[1] for p in (data_dir("op_tables") / "mlu").glob("torch_api_*.json"))


@lru_cache(maxsize=None)
def listed(version: str) -> frozenset[str]:
    """Every `torch.mlu.*` name (without the prefix) the list marks supported or partial,
    dotted for nested ones ("amp.GradScaler", "Event.record")."""
    path = data_dir("op_tables") / "mlu" / f"torch_api_{version}.json"
    if not path.is_file():
        raise ValueError(f"no torch_mlu API list for version {version!r} ({path}); known: {', '.join(versions())}")
    entries = json.loads(path.read_text(encoding="utf-8"))["entries"]
    return frozenset(
        name[len(PREFIX) :]
        for name, entry in entries.items()
        if name.startswith(PREFIX) and entry.get("status") in ("supported", "partial")
    )


def allowed(version: str, name: str) -> bool:
    """Whether `torch.mlu.<name>` exists on this torch_mlu line (name may be dotted)."""
    return name in ALWAYS or name in listed(version)


def top_level(version: str) -> frozenset[str]:
    return frozenset(n.split(".", 1)[0] for n in listed(version)) | ALWAYS
