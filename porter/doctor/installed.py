"""The installed distributions, as importlib.metadata finds them on a search path.

A distribution is found by its metadata folder's name, as `importlib.metadata.version(name)`
finds it (and transformers' and accelerate's version checks with it); its METADATA `Name`
and its RECORD say what it really is, which is how a renamed folder is told apart.
"""

from __future__ import annotations

import csv
import importlib.metadata as metadata
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from porter.tables.plain_requirement import canonical_name

_METADATA_DIR = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+?)(?:-py[\w.]+)?\.(?:dist|egg)-info$")


@dataclass(frozen=True)
class Dist:
    """One installed distribution."""

    name: str  # METADATA's Name, canonical
    version: str
    folder: Path | None  # its .dist-info / .egg-info folder
    requires: tuple[str, ...] = ()
    record: tuple[str, ...] = ()  # the paths its RECORD lists, as written

    @property
    def folder_name(self) -> str | None:
        """The project name its folder says, canonical (what importlib.metadata looks up)."""
        if self.folder is None:
            return None
        match = _METADATA_DIR.match(self.folder.name)
        return canonical_name(match.group("name")) if match else None

    @property
    def recorded_folders(self) -> tuple[str, ...]:
        """The metadata folders its RECORD names (its own, unless the folder was renamed)."""
        found = {p.split("/", 1)[0] for p in self.record if re.match(r"^[^/]+\.(?:dist|egg)-info/", p)}
        return tuple(sorted(found))

    @property
    def local_label(self) -> str:
        """The local version label (`cu121` of 0.16.0+cu121), or ""."""
        return self.version.partition("+")[2]


class Installed:
    """The distributions on `path` (default: sys.path), first one of a name wins."""

    def __init__(self, path: Sequence[str] | None = None) -> None:
        found = metadata.distributions() if path is None else metadata.distributions(path=list(path))
        dists = [_dist(d) for d in found]
        # A folder twice on the path is one installation.
        self.dists: list[Dist] = list({d.folder or id(d): d for d in dists}.values())

    def find(self, name: str) -> Dist | None:
        """The distribution importlib.metadata answers for `name` (by folder, then by Name)."""
        wanted = canonical_name(name)
        for dist in self.dists:
            if (dist.folder_name or dist.name) == wanted:
                return dist
        return None

    def named(self, name: str) -> list[Dist]:
        """Every distribution whose METADATA Name is `name`, wherever its folder."""
        wanted = canonical_name(name)
        return [d for d in self.dists if d.name == wanted]


def _dist(dist: metadata.Distribution) -> Dist:
    folder = getattr(dist, "_path", None)  # PathDistribution's folder; None for other finders
    record = dist.read_text("RECORD") or ""
    return Dist(
        name=canonical_name(dist.metadata["Name"] or ""),
        version=dist.metadata["Version"] or "",
        folder=Path(folder) if folder is not None else None,
        requires=tuple(dist.requires or ()),
        record=tuple(row[0] for row in csv.reader(record.splitlines()) if row),
    )
