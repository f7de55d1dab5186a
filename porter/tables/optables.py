"""Per-target torch API support tables: what op_tables/ says about one API name.

Two formats feed one model. MLU and NPU tables are generated JSON, one per vendor line
(op_tables/<target>/torch_api_<torch version>.json, built by tools/build_op_tables.py from
torch_mlu's and Ascend's support lists). The HIP table is hand-written TOML
(op_tables/hip/torch_api.toml) and version-independent; its keys may be prefixes
(`torch.cuda.*`). A lookup tries the exact name first, then the longest matching prefix;
anything else is `unknown`, never a guess.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Literal

from porter.core.datafiles import load_toml
from porter.rules.kinds import API_STATUSES
from porter.tables.versions import ANY_VERSION, available_versions, table_versions, tables_dir  # noqa: F401 (re-exported)

Status = Literal["supported", "partial", "unsupported", "unknown"]
STATUSES: tuple[Status, ...] = API_STATUSES  # type: ignore[assignment]
_ENTRY_KEYS = {
    "status",
    "note",
    "counterpart",
    "counterpart_of",
    "source",
    "doubtful",
    "when",
    "host_when",
    "host_note",
}


@dataclass(frozen=True)
class ApiEntry:
    """What one table says about one API. `matched` is the key that answered it
    (the name itself, or a prefix such as "torch.cuda.*"); None when the status is unknown."""

    api: str
    status: Status
    note: str | None = None
    counterpart: str | None = None
    source: str | None = None
    matched: str | None = None
    # The vendor says unsupported, but the API is device-independent host code (the vendor
    # list has dubious `false` entries, such as optimizer `step` methods, so a `false` is
    # evidence, not proof): reported, without failing a build.
    doubtful: bool = False
    # For a `partial` entry: what in a use makes the limitation apply (tools/op_notes.toml,
    # [triggers]): `kw` (the keyword is given), `kw=VALUE`, `'text'` (a string argument),
    # `.ATTR` (an attribute such as ReduceOp.BAND). Empty: the limitation cannot be seen in code.
    when: tuple[str, ...] = ()
    # For an `unsupported` entry: the form of a call that is host code or a supported op all the
    # same (tools/op_notes.toml, [host_forms]), in the language of `when` plus `arg:NAME` (the first
    # argument is NAME; `arg:dtype`, a torch dtype), and what to say of a use in that form.
    host_when: tuple[str, ...] = ()
    host_note: str | None = None


# eq=False: identity equality and hashing, since the mappings inside are not hashable.
@dataclass(frozen=True, eq=False)
class ApiTable:
    """One target's API table for one torch version (or ANY_VERSION)."""

    target: str
    version: str
    source: str
    entries: Mapping[str, ApiEntry]
    prefixes: Mapping[str, ApiEntry]  # keyed by the prefix without its trailing ".*"
    # Answers already given: a tree asks about the same few hundred names thousands of times.
    _answers: dict[str, ApiEntry] = field(default_factory=dict, repr=False)

    def lookup(self, api: str) -> ApiEntry:
        """Exact entry, else the longest prefix entry, else status `unknown`."""
        entry = self._answers.get(api)
        if entry is None:
            entry = self._answers[api] = self.entries.get(api) or self._search(api)
        return entry

    def _search(self, api: str) -> ApiEntry:
        parts = api.split(".")
        for end in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:end])
            hit = self.prefixes.get(prefix)
            if hit is not None:
                counterpart = hit.counterpart
                if counterpart and counterpart.endswith(".*"):
                    counterpart = counterpart[:-1] + ".".join(parts[end:])
                return replace(hit, api=api, counterpart=counterpart)
        return ApiEntry(api=api, status="unknown")

    def tensor_method(self, name: str) -> ApiEntry | None:
        """The entry for `torch.Tensor.<name>` (a bare method or attribute name), or None."""
        return self._known(f"torch.Tensor.{name.lstrip('.')}")

    def module_method(self, name: str) -> ApiEntry | None:
        """The entry for `torch.nn.Module.<name>`, or None."""
        return self._known(f"torch.nn.Module.{name.lstrip('.')}")

    def counts(self) -> dict[str, int]:
        """Number of exact entries per status (prefix entries not included)."""
        result = dict.fromkeys(STATUSES[:-1], 0)
        for entry in self.entries.values():
            result[entry.status] += 1
        return result

    def _known(self, api: str) -> ApiEntry | None:
        entry = self.lookup(api)
        return None if entry.status == "unknown" else entry


def load_api_table(target: str, version: str | None = None) -> ApiTable:
    """Load (cached) the API table of `target` for torch `version` (default: the newest).

    "2.4.1" selects the 2.4 table. A version-independent table serves every version.
    An unknown version raises ValueError listing the available ones.
    """
    versions = table_versions(target)
    if versions == (ANY_VERSION,) or version is None:
        return _load(target, versions[-1])
    release = re.match(r"v?(\d+)\.(\d+)", version.strip())
    wanted = f"{int(release.group(1))}.{int(release.group(2))}" if release else version
    if wanted not in versions:
        raise ValueError(f"no {target} API table for torch {version!r}; available: {', '.join(versions)}")
    return _load(target, wanted)


@lru_cache(maxsize=None)
def _load(target: str, version: str) -> ApiTable:
    folder = tables_dir(target)
    if version == ANY_VERSION:
        return _from_toml(folder / "torch_api.toml", target)
    return _from_json(folder / f"torch_api_{version}.json", target, version)


def _entry(path: Path, api: str, raw: Mapping, default_source: str) -> ApiEntry:
    unknown = set(raw) - _ENTRY_KEYS
    if unknown or raw.get("status") not in STATUSES[:-1]:
        raise ValueError(f"{path}: bad entry {api!r}: {sorted(unknown) or raw.get('status')!r}")
    source = raw.get("source")
    # A derived name (counterpart_of) is not in the vendor list: its own source stands alone.
    if default_source and source and "counterpart_of" not in raw:
        source = f"{default_source}; {source}"
    return ApiEntry(
        api,
        raw["status"],
        raw.get("note"),
        raw.get("counterpart"),
        source or default_source,
        api,
        bool(raw.get("doubtful")),
        tuple(raw.get("when", ())),
        tuple(raw.get("host_when", ())),
        raw.get("host_note"),
    )


class _Entries(Mapping):
    """A table's entries, each made (and checked) when first asked for: a run asks about a
    few hundred of the thousands a table holds, and making them all costs ~15 ms per process."""

    def __init__(self, path: Path, raw: Mapping[str, Mapping], default_source: str, suffix: str = "") -> None:
        self._path, self._raw, self._source = path, raw, default_source
        self._suffix = suffix  # ".*" for prefix entries: their name in the table
        self._made: dict[str, ApiEntry] = {}

    def __getitem__(self, api: str) -> ApiEntry:
        entry = self._made.get(api)
        if entry is None:
            entry = self._made[api] = _entry(self._path, api + self._suffix, self._raw[api], self._source)
        return entry

    def __iter__(self):
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


def _split(path: Path, raw: Mapping[str, Mapping], default_source: str) -> tuple[Mapping, Mapping]:
    exact = {api: item for api, item in raw.items() if not api.endswith(".*")}
    prefixes = {api[:-2]: item for api, item in raw.items() if api.endswith(".*")}
    return _Entries(path, exact, default_source), _Entries(path, prefixes, default_source, ".*")


def _from_json(path: Path, target: str, version: str) -> ApiTable:
    data = json.loads(path.read_text(encoding="utf-8"))
    src = data["source"]
    source = f"{src['repo']}@{src['commit'][:12]}:{src['path']}"
    exact, prefixes = _split(path, data["entries"], source)
    return ApiTable(target, version, source, exact, prefixes)


def _from_toml(path: Path, target: str) -> ApiTable:
    data = load_toml(path.read_bytes())
    exact, prefixes = _split(path, data.get("apis", {}), "")
    missing = [api for api, e in [*exact.items(), *prefixes.items()] if not e.source]  # a small table: all checked
    if missing:
        raise ValueError(f"{path}: entries without a source: {', '.join(sorted(missing))}")
    version = str(data.get("table", {}).get("version", ANY_VERSION))
    return ApiTable(target, version, f"porter: op_tables/{target}/{path.name}", exact, prefixes)
