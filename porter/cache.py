"""A per-file result cache for re-runs (CI): content hash + rules + porter version.

Each entry is one JSON file named by its key, written atomically (temporary file, then
rename), so two runs sharing the directory never see half an entry. An entry carries a
checksum of its own payload; anything that does not load, does not verify or does not
match the key exactly is ignored and recomputed, never trusted.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path

from porter import __version__
from porter.model import Edit, EditRecord, FileResult, Finding


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
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> FileResult | None:
        try:
            entry = json.loads(self._path(key).read_text(encoding="utf-8"))
            payload = entry["payload"]
            if entry.get("key") != key or entry.get("sha256") != _digest(payload):
                return None
            return _decode(json.loads(payload))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, result: FileResult) -> None:
        payload = json.dumps(_encode(result), sort_keys=True)
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


def _encode(r: FileResult) -> dict:
    return {
        "path": r.path, "status": r.status, "kind": r.kind, "reason": r.reason,
        "edits": [asdict(e) for e in r.edits],
        "findings": [asdict(f) for f in r.findings],
        "new_bytes": None if r.new_bytes is None else base64.b64encode(r.new_bytes).decode("ascii"),
        "apis": [list(a) for a in r.apis],
    }


def _decode(d: dict) -> FileResult:
    findings = []
    for f in d["findings"]:
        edit = f.pop("edit", None)
        findings.append(Finding(**f, edit=Edit(**edit) if edit else None))
    return FileResult(
        path=d["path"], status=d["status"], kind=d["kind"], reason=d["reason"],
        edits=tuple(EditRecord(**e) for e in d["edits"]),
        findings=tuple(findings),
        new_bytes=None if d["new_bytes"] is None else base64.b64decode(d["new_bytes"], validate=True),
        apis=tuple((api, status) for api, status in d["apis"]),
    )
