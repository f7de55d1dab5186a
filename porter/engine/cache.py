"""A per-file result cache for re-runs (CI): content hash + rules + porter version.

Every file's result has its own key (its bytes, its path, the run's context, porter's
version and code). The results of one run are stored together in one *pack*: a run writes
one file, not one per source file (on a fresh cache, hundreds of small files cost more than
the work they save). A later run looks its keys up in the newest packs of the same context
and computes only what they lack, then writes a new pack if it computed anything; a re-run
of an unchanged tree reads one pack and writes nothing. Older packs beyond the newest few
are removed.

Single entries (`get`/`put`: rendered reports, LoRA files) are one file each. Every file is
written atomically (temporary file, then rename), so two runs sharing the directory never
see half of one, and carries a checksum of its payload; anything that does not load, does
not verify or does not match its key is ignored and recomputed, never trusted.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from porter import __version__
from porter.core.cache_writes import cache_write
from porter.core.datafiles import data_dir
from porter.core.files import write_beneath
from porter.core.model import Edit, EditRecord, FileCheck, FileResult, Finding, plain
from porter.engine.parallel import map_files

T = TypeVar("T")
R = TypeVar("R")


@lru_cache(maxsize=None)
def code_fingerprint() -> str:
    """porter's own code and tables (names, sizes, mtimes of its modules, templates and the
    API/package tables): a change to a handler or a table invalidates results even before the
    version number moves. (Rules are in every key through the rule set's digest.)"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the `porter` package
    roots = [root]
    try:
        roots.append(str(data_dir("op_tables")))  # a checkout keeps it beside the package
    except FileNotFoundError:
        pass
    lines = []
    for top in roots:
        for folder, dirs, files in os.walk(top):  # os.walk, not Path.rglob: this runs on every start
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in files:
                if name.endswith((".py", ".j2", ".json", ".toml")):
                    path = os.path.join(folder, name)
                    st = os.stat(path)
                    lines.append(f"{path[len(top) + 1 :]}|{st.st_size}|{st.st_mtime_ns}\n")  # relative to top
    return hashlib.sha256("".join(sorted(lines)).encode()).hexdigest()


def content_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cache_key(digest: str, rel: str, context: str) -> str:
    """Key of one file's result: the digest of its bytes (`content_digest`: a re-run may know
    it without reading the file, porter/engine/tree_index.py), its path (file types depend on
    it), the run context."""
    h = _key_prefix(__version__, code_fingerprint(), context).copy()
    # A name that is not UTF-8 (surrogateescape) keys by its bytes.
    for part in (rel.encode("utf-8", "surrogateescape"), digest.encode()):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


@lru_cache(maxsize=64)
def _key_prefix(version: str, fingerprint: str, context: str):
    """The hash of what every key of a run starts with (never updated: `cache_key` copies it)."""
    h = hashlib.sha256()
    for part in (version.encode(), fingerprint.encode(), context.encode()):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h


class ResultCache:
    """Entries of one result type, with its codec (to and from plain JSON data)."""

    PACKS_KEPT = 4  # per context: enough for a few trees or branches sharing one cache

    def __init__(
        self, directory: Path, encode: Callable[[Any], dict] | None = None, decode: Callable[[dict], Any] | None = None
    ) -> None:
        self.directory = directory
        self.encode = encode or encode_file_result
        self.decode = decode or decode_file_result

    def get(self, key: str) -> Any | None:
        try:
            return self.decode(read_entry(self._path(key), key))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, result: Any) -> None:
        write_entry(self.directory, f"{key[:2]}/{key}.json", key, self.encode(result))

    def get_many(self, context: str, keys: Sequence[str]) -> list[Any | None]:
        """The results stored under `keys` in the newest packs of `context` (None: not found)."""
        found: list[Any | None] = [None] * len(keys)
        wanted = {key: i for i, key in enumerate(keys)}
        for path in self._packs(context):
            try:
                stored = read_entry(path, path.stem.split("-")[0])
                for key in [k for k in wanted if k in stored]:
                    found[wanted.pop(key)] = self.decode(stored[key])
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                continue  # a pack that does not verify is skipped whole
            if not wanted:
                break
        return found

    def has_packs(self, context: str) -> bool:
        """Whether any run stored results of `context` (this porter, command and rules)."""
        return bool(self._packs(context))

    def put_many(self, context: str, results: dict[str, Any]) -> None:
        """Store one run's results as a new pack of `context`; drop the oldest packs."""
        folder = self._pack_folder(context)
        name = _digest(json.dumps(sorted(results)))[:32]
        write_entry(
            self.directory,
            f"{folder.relative_to(self.directory).as_posix()}/{name}-{os.getpid()}.json",
            name,
            {k: self.encode(r) for k, r in results.items()},
        )
        for old in self._packs(context)[self.PACKS_KEPT :]:
            try:
                old.unlink()
            except OSError:
                pass  # another run removed it first

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def _pack_folder(self, context: str) -> Path:
        # Another porter (version or code) never finds these keys: its packs live apart.
        return self.directory / "packs" / _digest(f"{__version__}|{code_fingerprint()}|{context}")[:24]

    def _packs(self, context: str) -> list[Path]:
        """The packs of `context`, newest first."""
        try:
            entries = [
                (e.stat().st_mtime_ns, e.path)
                for e in os.scandir(self._pack_folder(context))
                if e.name.endswith(".json")
            ]
        except OSError:
            return []
        return [Path(p) for _, p in sorted(entries, reverse=True)]


def read_entry(path: Path, key: str) -> Any:
    """The verified payload of an entry; raises when it is missing or does not verify.

    An entry is one line of JSON header (its key and the payload's checksum), then the
    payload, JSON as well: written once, parsed once (not a string inside a string)."""
    header, _, payload = path.read_bytes().partition(b"\n")
    meta = json.loads(header)
    if (
        not isinstance(meta, dict)
        or meta.get("key") != key
        or meta.get("sha256") != hashlib.sha256(payload).hexdigest()
    ):
        raise ValueError("cache entry does not verify")
    return json.loads(payload)


def write_entry(root: Path, rel: str, key: str, data: Any) -> None:
    try:
        payload = json.dumps(data, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError):
        return  # not storable: computed again next time
    header = json.dumps({"key": key, "sha256": hashlib.sha256(payload).hexdigest()}).encode("utf-8")
    # Atomic, and never through a link planted in the cache directory: a reader (another run
    # sharing the directory) sees the old entry or the new one. A cache that cannot be
    # written only costs time: skipped, said once (porter/core/cache_writes.py).
    cache_write(root, lambda: write_beneath(root, rel, header + b"\n" + payload))


def _digest(payload: str) -> str:
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def cached_map(
    work: Callable[[T], R],
    tasks: Sequence[T],
    keys: Sequence[str],
    size: Callable[[T], int],
    jobs: int | None,
    cache: ResultCache | None,
    context: str = "",
    keep: Callable[[R], bool] = lambda r: True,
    bundle: Callable[[T], str | None] = lambda t: None,
    path_of: Callable[[T], str] | None = None,
) -> list[R]:
    """`map_files(work, tasks, size, jobs, bundle)`, answering from the cache's packs of
    `context` where an entry verifies, and storing this run's results that `keep` accepts
    (not porter's own failures) as a new pack when any had to be computed. With `path_of`, a
    cached result must name its task's path (`result.path`): an entry that names another path
    (one outside OUT, say) is not trusted, it is computed again."""
    results: list[R | None] = cache.get_many(context, keys) if cache is not None else [None] * len(tasks)
    if path_of is not None:
        results = [r if r is None or getattr(r, "path", None) == path_of(t) else None for r, t in zip(results, tasks)]
    missing = [i for i, r in enumerate(results) if r is None]
    for i, result in zip(missing, map_files(work, [tasks[i] for i in missing], size, jobs, bundle)):
        results[i] = result
    if cache is not None and missing:
        cache.put_many(context, {k: r for k, r in zip(keys, results) if keep(r)})  # type: ignore[arg-type]
    return results  # type: ignore[return-value]


def cached_texts(cache_dir: Path | None, inputs: bytes, label: str, render: Callable[[], list[str]]) -> list[str]:
    """`render()`: texts that are a pure function of `inputs` (report pages, LoRA files),
    or the ones it gave before for the same inputs and porter's own code."""
    texts = stored_texts(cache_dir, inputs, label)
    if texts is None:
        texts = render()
        if cache_dir is not None:
            _text_cache(cache_dir).put(_text_key(inputs, label), texts)
    return texts


def stored_texts(cache_dir: Path | None, inputs: bytes, label: str) -> list[str] | None:
    """What `cached_texts` would answer without rendering; None when it would render."""
    if cache_dir is None:
        return None
    texts = _text_cache(cache_dir).get(_text_key(inputs, label))
    return texts if isinstance(texts, list) and all(isinstance(t, str) for t in texts) else None


def _text_cache(cache_dir: Path) -> ResultCache:
    return ResultCache(cache_dir, encode=lambda texts: {"texts": texts}, decode=lambda d: d["texts"])


def _text_key(inputs: bytes, label: str) -> str:
    return cache_key(content_digest(inputs), label, "render")


def encode_finding(f: Finding) -> dict:
    d = plain(f)
    if f.edit is not None:
        d["edit"] = plain(f.edit)
    return d


def decode_finding(d: dict) -> Finding:
    d = dict(d)
    edit = d.pop("edit", None)
    return Finding(**d, edit=Edit(**edit) if edit else None)


def encode_file_result(r: FileResult) -> dict:
    return {
        "path": r.path,
        "status": r.status,
        "kind": r.kind,
        "reason": r.reason,
        "edits": [plain(e) for e in r.edits],
        "findings": [encode_finding(f) for f in r.findings],
        "new_bytes": None if r.new_bytes is None else base64.b64encode(r.new_bytes).decode("ascii"),
        "apis": [list(a) for a in r.apis],
        "diff": base64.b64encode(r.diff).decode("ascii"),
        "lines": r.lines,
    }


def decode_file_result(d: dict) -> FileResult:
    return FileResult(
        path=d["path"],
        status=d["status"],
        kind=d["kind"],
        reason=d["reason"],
        edits=tuple(EditRecord(**e) for e in d["edits"]),
        findings=tuple(decode_finding(f) for f in d["findings"]),
        new_bytes=None if d["new_bytes"] is None else base64.b64decode(d["new_bytes"], validate=True),
        apis=tuple((api, status) for api, status in d["apis"]),
        diff=base64.b64decode(d["diff"], validate=True),
        lines=d["lines"],
    )


def encode_file_check(r: FileCheck) -> dict:
    """FileCheck as plain data, for the result cache."""
    return {
        "path": r.path,
        "kind": r.kind,
        "findings": [encode_finding(f) for f in r.findings],
        "line_hashes": list(r.line_hashes),
        "apis": [list(a) for a in r.apis],
        "suppressed": r.suppressed,
        "skipped": r.skipped,
        "error": r.error,
    }


def decode_file_check(d: dict) -> FileCheck:
    return FileCheck(
        d["path"],
        d["kind"],
        tuple(decode_finding(f) for f in d["findings"]),
        tuple(d["line_hashes"]),
        tuple((a, s) for a, s in d["apis"]),
        d["suppressed"],
        d["skipped"],
        d["error"],
    )
