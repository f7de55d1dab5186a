"""Which torchvision and torchaudio releases pair with a torch release (op_tables/torch_pairs.toml).

torchvision and torchaudio are compiled against one torch: the release of another pairing
fails to import (undefined symbols) or, installed by pip, brings its own torch over the
vendor's. The table is the same for every target; which torch a target line runs is the
package table's business (`torch`'s releases_by_line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from porter.core.datafiles import data_dir, load_toml


@dataclass(frozen=True)
class Pair:
    torch: str  # the .0 release of the minor; patch releases pair by patch (2.4.1 -> 0.19.1)
    torchvision: str
    torchaudio: str | None  # None: no torchaudio release for that torch
    source: str


@lru_cache(maxsize=None)
def load_torch_pairs() -> dict[str, Pair]:
    """torch minor ("2.4") -> its Pair. ValueError names the file and the bad key."""
    path = data_dir("op_tables") / "torch_pairs.toml"
    data = load_toml(path.read_bytes())
    source = data.get("source", "")
    pairs: dict[str, Pair] = {}
    for minor, raw in data.get("pairs", {}).items():
        if (
            not isinstance(raw, dict)
            or not isinstance(raw.get("torch"), str)
            or not isinstance(raw.get("torchvision"), str)
        ):
            raise ValueError(f"{path}: pairs.{minor}: needs torch and torchvision releases")
        if _minor(raw["torch"]) != minor:
            raise ValueError(f"{path}: pairs.{minor}.torch: {raw['torch']!r} is not a {minor} release")
        pairs[minor] = Pair(raw["torch"], raw["torchvision"], raw.get("torchaudio"), raw.get("source", source))
    return pairs


def pair_for(torch_version: str) -> Pair | None:
    """The pair of a torch release ("2.4.1", "2.4.0+cpu", "2.4"); a patch release shifts
    torchvision's and torchaudio's patch number alike. None for a torch the table lacks."""
    minor = _minor(torch_version)
    pair = load_torch_pairs().get(minor or "")
    if pair is None:
        return None
    patch = _patch(torch_version)
    if not patch:
        return pair
    return Pair(
        f"{minor}.{patch}",
        _with_patch(pair.torchvision, patch),
        _with_patch(pair.torchaudio, patch) if pair.torchaudio else None,
        pair.source,
    )


def _minor(version: str) -> str | None:
    match = re.match(r"\s*(\d+)\.(\d+)", version)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def _patch(version: str) -> int:
    match = re.match(r"\s*\d+\.\d+\.(\d+)", version)
    return int(match.group(1)) if match else 0


def _with_patch(version: str, patch: int) -> str:
    major_minor = _minor(version)
    return f"{major_minor}.{_patch(version) + patch}" if major_minor else version
