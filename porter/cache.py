"""A per-file result cache for re-runs (CI): content hash + rules + porter version.

Each entry is one JSON file named by its key, written atomically (temporary file, then
rename), so two runs sharing the directory never see half an entry. An entry carries a
checksum of its own payload; anything that does not load, does not verify or does not
match the key exactly is ignored and recomputed, never trusted.

Besides one entry per file, a run stores all its results as one batch entry, keyed by the
keys of all its files: a re-run of an unchanged tree (the usual CI case) reads one file
instead of one per source file. A run with one file changed misses the batch, reads the
per-file entries and computes only that file.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from porter import __version__
from porter.model import Edit, EditRecord, FileResult, Finding
from porter.parallel import map_files

T = TypeVar("T")
R = TypeVar("R")


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "porter"


@lru_cache(maxsize=None)
def code_fingerprint() -> str:
    """porter's own code (names, sizes, mtimes of its modules and templates): a change to a
    handler invalidates results even before the version number moves."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.suffix in (".py", ".j2") and path.is_file():
            st = path.stat()
            h.update(f"{path.relative_to(root)}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def cache_key(data: bytes, rel: str, context: str) -> str:
    """Key of one file's result: its bytes, its path (file types depend on it), the run context."""
    h = hashlib.sha256()
    for part in (__version__.encode(), code_fingerprint().encode(), context.encode(), rel.encode(), data):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


class ResultCache:
    """Entries of one result type, with its codec (to and from plain JSON data)."""

    def __init__(self, directory: Path, encode: Callable[[Any], dict] | None = None,
                 decode: Callable[[dict], Any] | None = None) -> None:
        self.directory = directory
        self.encode = encode or encode_file_result
        self.decode = decode or decode_file_result

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Any | None:
        try:
            return self.decode(self._read(key))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, result: Any) -> None:
        self._write(key, self.encode(result))

    def get_batch(self, key: str, count: int) -> list | None:
        """The `count` results stored together under `key`, or None."""
        try:
            data = self._read(key)
            if not isinstance(data, list) or len(data) != count:
                return None
            return [self.decode(item) for item in data]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put_batch(self, key: str, results: Sequence[Any]) -> None:
        self._write(key, [self.encode(r) for r in results])

    def _read(self, key: str) -> Any:
        """The verified payload of an entry; raises when it is missing or does not verify."""
        entry = json.loads(self._path(key).read_text(encoding="utf-8"))
        payload = entry["payload"]
        if entry.get("key") != key or entry.get("sha256") != _digest(payload):
            raise ValueError("cache entry does not verify")
        return json.loads(payload)

    def _write(self, key: str, data: Any) -> None:
        payload = json.dumps(data, sort_keys=True)
        entry = json.dumps({"key": key, "sha256": _digest(payload), "payload": payload})
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(entry)
            os.replace(tmp, path)
        except OSError:
            pass  # a cache that cannot be written only costs time


def _digest(payload: str) -> str:
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def cached_map(work: Callable[[T], R], tasks: Sequence[T], keys: Sequence[str], size: Callable[[T], int],
               jobs: int | None, cache: ResultCache | None, keep: Callable[[R], bool] = lambda r: True,
               meanwhile: Callable[[], None] | None = None) -> list[R]:
    """`map_files(work, tasks)`, answering from the cache where an entry verifies and
    storing the new results that `keep` accepts (not porter's own failures).

    The whole list is also stored as one batch entry (when every result is kept), which
    answers the next run of exactly the same tasks in one read."""
    if cache is None:
        return map_files(work, tasks, size, jobs, meanwhile)
    batch_key = _batch_key(keys)
    batch = cache.get_batch(batch_key, len(keys))
    if batch is not None:
        if meanwhile is not None:
            meanwhile()
        return batch
    results: list[R | None] = [cache.get(k) for k in keys]
    missing = [i for i, r in enumerate(results) if r is None]
    for i, result in zip(missing, map_files(work, [tasks[i] for i in missing], size, jobs, meanwhile)):
        results[i] = result
        if keep(result):
            cache.put(keys[i], result)
    if all(keep(r) for r in results):  # type: ignore[arg-type]
        cache.put_batch(batch_key, results)
    return results  # type: ignore[return-value]


def _batch_key(keys: Sequence[str]) -> str:
    h = hashlib.sha256(b"batch\n")
    for key in keys:
        h.update(key.encode("ascii"))
    return h.hexdigest()


def encode_finding(f: Finding) -> dict:
    return asdict(f)


def decode_finding(d: dict) -> Finding:
    d = dict(d)
    edit = d.pop("edit", None)
    return Finding(**d, edit=Edit(**edit) if edit else None)


def encode_file_result(r: FileResult) -> dict:
    return {
        "path": r.path, "status": r.status, "kind": r.kind, "reason": r.reason,
        "edits": [asdict(e) for e in r.edits],
        "findings": [encode_finding(f) for f in r.findings],
        "new_bytes": None if r.new_bytes is None else base64.b64encode(r.new_bytes).decode("ascii"),
        "apis": [list(a) for a in r.apis],
        "diff": base64.b64encode(r.diff).decode("ascii"),
    }


def decode_file_result(d: dict) -> FileResult:
    return FileResult(
        path=d["path"], status=d["status"], kind=d["kind"], reason=d["reason"],
        edits=tuple(EditRecord(**e) for e in d["edits"]),
        findings=tuple(decode_finding(f) for f in d["findings"]),
        new_bytes=None if d["new_bytes"] is None else base64.b64decode(d["new_bytes"], validate=True),
        apis=tuple((api, status) for api, status in d["apis"]),
        diff=base64.b64decode(d["diff"], validate=True),
    )
