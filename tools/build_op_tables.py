"""Build op_tables/<target>/torch_api_<version>.json from the vendors' API support lists.

Usage: python tools/build_op_tables.py [--data DIR] [--out DIR] [--notes FILE]

One code path for every vendor; what differs is read by a small per-vendor reader (VENDORS):
Cambricon's torch_mlu lists (`torch_mlu/torch_api.r<version>_develop.yaml`, one sectioned YAML
file per torch line, with a limitation flag and an MLU counterpart per API) and Ascend's lists
for torch_npu (`ascend/op_list_<major>_<minor>.json`, the unsupported APIs, and
`ascend/supported_op_<major>_<minor>.json`, the supported ones). Both are under DIR (default
tools/vendor_data, the project's copy that tools/import_vendor_data.py brings in), whose
README names each file's origin. porter's notes come from tools/op_notes.toml (the top level
for mlu, `[npu]` for npu). The script writes one JSON table per target and torch version. The
output is deterministic (sorted keys, one entry per line), so re-running on unchanged input
changes no byte and a stale committed table fails tests/test_optables.py. PyYAML is needed
here only, never at runtime.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO_ROOT = Path(__file__).resolve().parent.parent
SCHEMA = 1
# Vendor placeholders that mean "no counterpart" (否 is Chinese for "no").
NO_COUNTERPART = {"", "N/A", "否"}
PORTER_COUNTERPART = "porter (Cambricon/torch_mlu, torch_mlu/__init__.py)"
DATA_FILE = re.compile(r"torch_api\.r(\d+\.\d+)_develop\.yaml$")
ASCEND_FILE = re.compile(r"(?:op_list|supported_op)_(\d+)_(\d+)\.json$")
SOURCE_ROW = re.compile(r"^\|\s*(\S+)\s*\|.*\|\s*(\S+/\S+)\s*@\s*([0-9a-f]+),\s*(.+?)\s*\|\s*$")
SAME_ROW = re.compile(r"^\|\s*(\S+)\s*\|.*\|\s*same\s*\|\s*$")
NAMING = (
    "Device-namespace APIs are listed under their CUDA names (torch.cuda.synchronize, "
    "torch.backends.cudnn.allow_tf32); the MLU name is the entry's counterpart "
    "(torch.mlu.synchronize). Entries with counterpart_of are derived by porter from "
    "those counterparts so MLU names can be looked up too."
)
NPU_NAMING = (
    "Device-namespace APIs are listed under their CUDA names (torch.cuda.synchronize); the "
    "vendor list gives no NPU names, so porter adds the NPU name as the counterpart of each "
    "supported one from the rules in tools/op_notes.toml [npu] (torch.cuda. becomes torch.npu., "
    "as Ascend's API reference says), each with its source. Entries with counterpart_of are "
    "derived by porter from those counterparts so NPU names can be looked up too."
)
NOTES = "Notes are porter's own wording, from tools/op_notes.toml; APIs not listed are unknown."


def read_sources(readme: Path) -> dict[str, dict[str, str]]:
    """Map each data file named in the data README to its upstream repo, commit and path."""
    sources: dict[str, dict[str, str]] = {}
    last_path = ""
    last: dict[str, str] | None = None
    for line in readme.read_text(encoding="utf-8").splitlines():
        match = SOURCE_ROW.match(line)
        same = SAME_ROW.match(line)
        if same and last is not None:
            # "same": the row's file comes from the previous row's repository, commit and path.
            sources[same.group(1)] = {**last, "file": same.group(1)}
            continue
        if not match:
            continue
        name, repo, commit, path = match.groups()
        # The README writes "same path" when a row repeats the previous row's path.
        path = last_path if path == "same path" else path
        last_path = path
        sources[name] = last = {"file": name, "repo": repo, "commit": commit, "path": path}
    return sources


def read_vendor(path: Path) -> dict[str, dict]:
    """Flatten the sectioned vendor YAML into api -> {supported, limited, counterpart}."""
    entries: dict[str, dict] = {}
    # The C loader, where PyYAML has one, parses the 4,000-entry lists about ten times faster.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for section in yaml.load(path.read_text(encoding="utf-8"), Loader=loader):
        for items in section.values():
            for item in items or []:
                api = item["api"]
                counterpart = str(item.get("corresponding MLU api") or "").strip()
                _add(
                    entries,
                    api,
                    {
                        "supported": bool(item["supported"]),
                        "limited": bool(item.get("limitations")),
                        "counterpart": None if counterpart in NO_COUNTERPART or counterpart == api else counterpart,
                    },
                )
    return entries


def _add(entries: dict[str, dict], api: str, new: dict) -> None:
    """Record one vendor answer; an API listed twice with opposite answers is unsupported."""
    old = entries.get(api)
    if old is not None and old["supported"] != new["supported"]:
        # The list sometimes names one API twice with opposite answers
        # (r2.4: torch.Tensor.coalesce); keep the cautious one and say so.
        new = {**old, "supported": False, "conflict": True}
    entries[api] = new if old is None or "conflict" in new else old


def read_mlu(files: list[Path]) -> dict[str, dict]:
    """torch_mlu: one YAML list per torch line."""
    (path,) = files
    return read_vendor(path)


def read_ascend(files: list[Path]) -> dict[str, dict]:
    """Ascend (msprobe's lists): `{"op_list": {api: ""}}` in an unsupported file (op_list_*) and
    a supported one (supported_op_*). No limitation flags and no NPU names: every value is empty."""
    entries: dict[str, dict] = {}
    # The supported list first, so an API in both lists ends as a conflict (unsupported).
    for path in sorted(files, key=lambda f: not f.name.startswith("supported_op")):
        supported = path.name.startswith("supported_op")
        for api, value in json.loads(path.read_text(encoding="utf-8"))["op_list"].items():
            if value:
                sys.exit(f"{path}: {api!r} has a value ({value!r}); the reader expects none")
            _add(entries, api, {"supported": supported, "limited": False, "counterpart": None})
    return entries


class Vendor(NamedTuple):
    """What differs between vendors' lists: where they are, how a file names its torch line,
    how one line's files are read, and where porter's notes for them are. (A NamedTuple: the
    tests load this script without registering it as a module, which a dataclass needs.)"""

    target: str  # op_tables/<target>/
    label: str  # how notes name the device ("MLU", "NPU")
    folder: str  # under the data folder
    pattern: re.Pattern[str]  # a data file's name; its groups make the torch line
    files_per_line: int
    read: Callable[[list[Path]], dict[str, dict]]
    naming: str
    notes_key: str | None  # the table of tools/op_notes.toml with its notes (None: the top level)
    doubtful: tuple[str, ...]  # note sections whose `false` entries are doubtful
    # Counterparts porter adds follow the API's status (npu: a name Ascend documents for a
    # supported API), or are always supported (mlu: names torch_mlu generates itself).
    added_follow_status: bool

    def line(self, name: str) -> str | None:
        match = self.pattern.search(name)
        return ".".join(match.groups()) if match else None

    def notes(self, all_notes: dict) -> dict:
        if self.notes_key is None:
            return {k: v for k, v in all_notes.items() if k not in VENDOR_NOTE_KEYS}
        return all_notes.get(self.notes_key, {})


VENDORS = (
    Vendor(
        target="mlu",
        label="MLU",
        folder="torch_mlu",
        pattern=DATA_FILE,
        files_per_line=1,
        read=read_mlu,
        naming=NAMING,
        notes_key=None,
        doubtful=("generic_python", "composite", "same_forward"),
        added_follow_status=False,
    ),
    Vendor(
        target="npu",
        label="NPU",
        folder="ascend",
        pattern=ASCEND_FILE,
        files_per_line=2,
        read=read_ascend,
        naming=NPU_NAMING,
        notes_key="npu",
        doubtful=("reference", "generic_python"),
        added_follow_status=True,
    ),
)
VENDOR_NOTE_KEYS = {v.notes_key for v in VENDORS if v.notes_key}


def note_for(api: str, version: str, notes: dict) -> str:
    """Porter's note for a limited API; a missing note is a build error, never a silent gap."""
    note = notes.get("version_notes", {}).get(version, {}).get(api) or notes.get("notes", {}).get(api)
    if not note:
        sys.exit(f"tools/op_notes.toml: no note for limited API {api!r} (torch {version})")
    return note


def added_counterpart(api: str, supported: bool, notes: dict, vendor: Vendor) -> tuple[str, str] | None:
    """(name, source) of the counterpart porter adds to `api`, if any: `[counterparts]` names one
    API (a string: the vendor's default source; a table: `to` and `source`), `[counterpart_prefixes]`
    a rule for every supported API under a prefix (npu: torch.cuda. -> torch.npu.)."""
    spec = notes.get("counterparts", {}).get(api)
    if spec is not None and (supported or not vendor.added_follow_status):
        return (spec, PORTER_COUNTERPART) if isinstance(spec, str) else (spec["to"], spec["source"])
    if not supported:
        return None
    for prefix, rule in sorted(notes.get("counterpart_prefixes", {}).items(), key=lambda kv: -len(kv[0])):
        if api.startswith(prefix):
            return rule["to"] + api[len(prefix) :], rule["source"]
    return None


def derive_name(api: str, entry: dict, vendor: Vendor, origin: str | None) -> dict:
    """Entry for the device name that `api` maps to, so device names can be looked up as well.
    `origin` is the source of a counterpart porter added (None: the vendor's own)."""
    if origin is not None and not vendor.added_follow_status:
        # Added by porter: torch_mlu generates these names itself, whatever the vendor
        # list says of the CUDA name (Module.cuda is `false` there, Module.mlu exists).
        note = f"{vendor.label} name for {api}, generated by torch_mlu."
        return {"status": "supported", "counterpart_of": api, "note": note, "source": origin}
    if entry["status"] == "unsupported":
        note = f"{vendor.label} name for {api}, which the vendor list marks unsupported."
        derived = {"status": "unsupported", "counterpart_of": api, "note": note}
    else:
        see = f" See the note on {api}." if entry["status"] == "partial" else ""
        derived = {"status": entry["status"] if origin else "supported", "counterpart_of": api}
        derived["note"] = f"{vendor.label} name for {api}.{see}"
    if origin is not None:
        derived["source"] = origin
    return derived


def build_table(version: str, vendor_list: dict[str, dict], source: dict, notes: dict, vendor: Vendor) -> dict:
    """Turn one vendor list into porter's table: statuses, notes and counterparts."""
    # Vendor `false`s that are doubtful: host code, composite ops that run through the ops
    # they are built from, and subclasses that run a supported module's forward. Each
    # section has its note and its API patterns.
    doubtful = [notes[section] for section in vendor.doubtful if section in notes]
    entries: dict[str, dict] = {}
    origins: dict[str, str] = {}  # api -> source of a counterpart porter added
    for api, item in vendor_list.items():
        entry: dict = {"status": "unsupported"}
        if item["supported"]:
            entry["status"] = "partial" if item["limited"] else "supported"
        if entry["status"] == "partial":
            entry["note"] = note_for(api, version, notes)
            if api in notes.get("triggers", {}):
                entry["when"] = notes["triggers"][api]
        elif item.get("conflict"):
            entry["note"] = "The vendor list names this API twice, once supported and once not; treated as unsupported."
        elif entry["status"] == "unsupported" and (
            group := next((g for g in doubtful if any(fnmatch.fnmatchcase(api, p) for p in g["apis"])), None)
        ):
            # (a pattern may also match entries the vendor supports, in this version or in a glob)
            entry["note"] = group["note"]
            entry["doubtful"] = True
        elif entry["status"] == "unsupported" and api in notes.get("host_forms", {}):
            entry["host_when"] = notes["host_forms"][api]["when"]
            entry["host_note"] = notes["host_forms"][api]["note"]
        counterpart = item["counterpart"]
        if not counterpart and (added := added_counterpart(api, entry["status"] != "unsupported", notes, vendor)):
            counterpart, origins[api] = added
            entry["source"] = f"status: vendor list; counterpart: {origins[api]}"
        if counterpart:
            entry["counterpart"] = counterpart
        entries[api] = entry
    for api, entry in sorted(entries.items()):
        name = entry.get("counterpart")
        if name and name not in entries:
            entries[name] = derive_name(api, entry, vendor, origins.get(api))
    counts = {status: 0 for status in ("supported", "partial", "unsupported")}
    for entry in entries.values():
        if "counterpart_of" not in entry:
            counts[entry["status"]] += 1
    return {
        "schema": SCHEMA,
        "target": vendor.target,
        "torch_version": version,
        "source": source,
        "naming": vendor.naming,
        "notes": NOTES,
        "counts": counts,
        "entries": entries,
    }


def render(table: dict) -> str:
    """Serialise with sorted keys and one entry per line, so diffs stay readable."""
    head = {k: v for k, v in table.items() if k != "entries"}
    lines = [f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True)}," for k, v in sorted(head.items())]
    rows = [f"    {json.dumps(api)}: {json.dumps(e, sort_keys=True)}" for api, e in sorted(table["entries"].items())]
    return "{\n" + "\n".join(lines) + '\n  "entries": {\n' + ",\n".join(rows) + "\n  }\n}\n"


def check_notes_used(notes: dict, vendors: dict[str, dict[str, dict]], vendor: Vendor | None = None) -> None:
    """Fail on notes or overrides that no longer match the data, so they do not rot."""
    vendor = vendor or VENDORS[0]
    where = "tools/op_notes.toml" + (f" [{vendor.notes_key}]" if vendor.notes_key else "")
    limited = {api for data in vendors.values() for api, e in data.items() if e["limited"] and e["supported"]}
    stale = [api for api in notes.get("notes", {}) if api not in limited]
    for version, table in notes.get("version_notes", {}).items():
        data = vendors.get(version, {})
        stale += [f"{api} ({version})" for api in table if not data.get(api, {}).get("limited")]
    stale += [f"triggers {api}" for api in notes.get("triggers", {}) if api not in limited]
    unsupported = {api for data in vendors.values() for api, e in data.items() if not e["supported"]}
    stale += [f"host_forms {api}" for api in notes.get("host_forms", {}) if api not in unsupported]
    for section in vendor.doubtful:
        for pattern in notes.get(section, {}).get("apis", []):
            if not any(
                not e["supported"] and fnmatch.fnmatchcase(api, pattern)
                for v in vendors.values()
                for api, e in v.items()
            ):
                stale.append(f"{section} {pattern}")
    if vendor.added_follow_status:
        # A counterpart porter adds names a supported API (in some line) and a prefix rule matches one.
        supported = {api for data in vendors.values() for api, e in data.items() if e["supported"]}
        stale += [f"counterparts {api}" for api in notes.get("counterparts", {}) if api not in supported]
        stale += [
            f"counterpart_prefixes {prefix}"
            for prefix in notes.get("counterpart_prefixes", {})
            if not any(api.startswith(prefix) for api in supported)
        ]
    if stale:
        sys.exit(
            f"{where}: entries that match nothing in the data (notes and triggers: a limited API; host forms "
            "and doubtful patterns: an unsupported one; counterparts: a supported one): " + ", ".join(sorted(stale))
        )


def _source(files: list[Path], data: Path, sources: dict[str, dict[str, str]], vendor: Vendor) -> dict:
    """Where one line's table comes from: the upstream repository, commit and path of its
    file (several files: theirs, which must share repository and commit), with digests."""
    rows = []
    for file in files:
        rel = f"{vendor.folder}/{file.name}"
        if rel not in sources:
            sys.exit(f"{data / 'README.md'}: no source row for {rel}")
        rows.append({**sources[rel], "sha256": hashlib.sha256(file.read_bytes()).hexdigest()})
    if len(rows) == 1:
        return rows[0]
    if len({(r["repo"], r["commit"], r["path"]) for r in rows}) != 1:
        sys.exit(f"{data / 'README.md'}: the files of one line come from different places: {rows}")
    first = rows[0]
    return {
        "repo": first["repo"],
        "commit": first["commit"],
        "path": first["path"],
        "files": [{"file": r["file"], "sha256": r["sha256"]} for r in rows],
    }


def build_vendor(vendor: Vendor, data: Path, out: Path, all_notes: dict, sources: dict) -> list[Path]:
    """Build every table of one vendor found under `data` into `out`; return the files written."""
    notes = vendor.notes(all_notes)
    by_line: dict[str, list[Path]] = {}
    for file in sorted((data / vendor.folder).glob("*")):
        line = vendor.line(file.name)
        if line is not None:
            by_line.setdefault(line, []).append(file)
    if not by_line:
        sys.exit(f"no {vendor.folder}/ data for {vendor.target} under {data}")
    for line, files in by_line.items():
        if len(files) != vendor.files_per_line:
            sys.exit(f"{data / vendor.folder}: torch {line} has {len(files)} files, expected {vendor.files_per_line}")
    vendors = {line: vendor.read(files) for line, files in by_line.items()}
    check_notes_used(notes, vendors, vendor)
    written = []
    for line, files in sorted(by_line.items(), key=lambda kv: tuple(int(p) for p in kv[0].split("."))):
        source = _source(files, data, sources, vendor)
        target = out / vendor.target / f"torch_api_{line}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render(build_table(line, vendors[line], source, notes, vendor)), encoding="utf-8")
        written.append(target)
    return written


def build(data: Path, out: Path, notes_path: Path) -> list[Path]:
    """Build every vendor's tables found under `data` into `out`; return the files written."""
    notes = tomllib.loads(notes_path.read_text(encoding="utf-8"))
    sources = read_sources(data / "README.md")
    return [path for vendor in VENDORS for path in build_vendor(vendor, data, out, notes, sources)]


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO_ROOT / "tools" / "vendor_data")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "op_tables")
    parser.add_argument("--notes", type=Path, default=REPO_ROOT / "tools" / "op_notes.toml")
    args = parser.parse_args(argv)
    for path in build(args.data, args.out, args.notes):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
