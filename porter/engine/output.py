"""Writing results: the OUT tree, or atomic in-place writes. Nothing the user owns is lost.

SRC is only written with --in-place, one file at a time through a temporary file and
os.replace, so a crash leaves either the old or the new file. In OUT, porter never writes
through a symlink: links are recreated as links, and a path whose parent resolves outside
OUT is refused.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from porter.core.files import (
    TEMP_SUFFIX,
    copy_new_file,
    inside,
    plain_rel,
    process_may_live,
    refuse_linked_folder,
    write_atomically,
)
from porter.engine.parallel import ForkedMap
from porter.core.tree import walk

if TYPE_CHECKING:
    from porter.core.model import FileResult
    from porter.engine.runner import RunResult


# Trees with fewer files are copied here and now: forking costs more.
_BACKGROUND_WRITES = 64


_LINKED_DIR = (
    "not written: its directory in OUT is a symbolic link (it leads outside OUT); porter never writes through one"
)


class DestinationError(Exception):
    """OUT cannot be used; the message says why."""


def default_out(src: Path, target: str) -> Path:
    return src.parent / f"{src.name}_{target}"


def check_destination(src: Path, out: Path, force: bool) -> None:
    """Refuse OUT inside SRC, OUT == SRC and a non-empty OUT without --force; OUT that is a
    symbolic link (LinkRefused: a link planted where the default OUT goes would lead the
    whole tree elsewhere), even with --force."""
    refuse_linked_folder(out, "remove it, or pass -o with the folder it points to")
    src_r, out_r = src.resolve(), out.resolve()
    if src_r == out_r:
        raise DestinationError(f"output {out} is the source tree; use --in-place to convert it in place")
    if src_r in out_r.parents:
        raise DestinationError(f"output {out} is inside the source tree {src}; choose a directory outside it")
    if out_r in src_r.parents:
        raise DestinationError(f"output {out} contains the source tree {src}; choose another directory")
    if os.path.lexists(out) and not out.is_dir():
        raise DestinationError(
            f"output {out} exists and is not a folder; porter does not write over it (even with --force)"
        )
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not force:
        raise DestinationError(f"output {out} exists and is not empty; pass --force to write into it")


class _Dirs:
    """Directories of OUT, made on demand, never through a symlink.

    Each directory is checked once, component by component from OUT down: a component that
    is a symlink (an OUT written into with --force may hold one) refuses everything below
    it, so porter cannot be led to write outside OUT.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        self.known: dict[str, bool] = {"": True}

    def ready(self, rel_dir: str) -> bool:
        if rel_dir in self.known:
            return self.known[rel_dir]
        ok = self.ready(rel_dir.rpartition("/")[0]) and _make_dir(f"{self.out}/{rel_dir}")
        self.known[rel_dir] = ok
        return ok


def _make_dir(path: str) -> bool:
    """A real directory at `path` (made if missing); False when `path` is a symlink. Two
    writer processes may make the same directory at once: whoever loses finds it made."""
    if os.path.islink(path):
        return False
    if os.path.isdir(path):
        return True
    try:
        os.mkdir(path)
    except FileExistsError:
        if os.path.islink(path):
            return False
        if not os.path.isdir(path):  # a file where SRC has a directory: SRC wins
            os.unlink(path)
            return _make_dir(path)
    return True


class TreeWriter:
    """Writes OUT: every file of SRC as it is, by a forked process that starts before the
    conversion (`start_copy`: creating hundreds of files is kernel work, done beside
    porter's own); then each converted file over its copy (`write`), and symlinks as links
    (`links`). Modes are kept, times are not (as `cp`). `problems` says what was not written.
    """

    def __init__(self, src: Path, out: Path, background: bool = True) -> None:
        self.src, self.out = src, out
        self.background = background  # False: every write in this process (--jobs 1)
        refuse_linked_folder(out)  # checked again: a link may have taken its place since
        out.mkdir(parents=True, exist_ok=True)  # OSError (naming OUT) when it cannot be made
        self.dirs = _Dirs(out)
        self.fresh = not any(out.iterdir())
        self.problems: list[str] = []
        self.failures: dict[str, str] = {}  # path -> why it was not written
        self.copied: set[str] = set()  # copied as in SRC
        self.walked: set[str] | None = None  # the regular files start_copy found
        self.failed: set[str] = set()  # not written; the problem is said once
        self._copying: tuple[ForkedMap, list[str]] | None = None
        self.umask = os.umask(0)
        os.umask(self.umask)

    def start_copy(self, exclude: Path | None = None) -> None:
        """Copy every regular file of SRC into OUT as it is, beside this process's work."""
        rels = [
            entry.rel
            for entry in walk(self.src, exclude)
            if not entry.is_symlink and entry.skipped is None and entry.failed is None
        ]
        self.walked = set(rels)
        if self.background and len(rels) >= _BACKGROUND_WRITES:
            self._copying = ForkedMap(self._copy, rels, jobs=2), rels  # this process joins in `write`
        else:
            self._record(rels, [self._copy(rel) for rel in rels])

    def write(self, results: list[FileResult]) -> None:
        """Each converted file over its copy; a file the copy did not see is copied now."""
        if self._copying is not None:
            copying, rels = self._copying
            self._copying = None
            self._record(rels, copying.finish())
        for result in results:
            if result.path in self.failed:
                continue
            if result.new_bytes is None and self.walked is not None and result.path not in self.walked:
                continue  # not a regular file (a pipe, porter's old report): reported, never copied
            if result.path in self.copied:
                if result.new_bytes is not None:
                    self._record([result.path], [self._replace(result.path, result.new_bytes)])
            else:
                self._record([result.path], [self._copy(result.path, result.new_bytes)])

    def _record(self, rels: list[str], outcomes: list[str | None]) -> None:
        for rel, problem in zip(rels, outcomes):
            if problem:
                self.problems.append(f"{rel}: {problem}")
                self.failures[rel] = problem
                self.failed.add(rel)
                self.copied.discard(rel)
            else:
                self.copied.add(rel)

    def _copy(self, rel: str, data: bytes | None = None) -> str | None:
        """Write SRC's file `rel` (or `data` instead of its bytes) into OUT with SRC's mode;
        None, or what went wrong. It may run in a forked process: it changes nothing of this
        object but the directory cache.

        In an OUT that was not empty, what is at the file's place is removed first, never
        written through: a symlink, or a hard link to another file (SRC's own, say), keeps
        what it points at."""
        if not plain_rel(rel):
            return "not written: not a path inside OUT"
        try:
            if not self.dirs.ready(rel.rpartition("/")[0]):
                return _LINKED_DIR
        except OSError as exc:
            return f"not written: {exc.strerror}"
        source, dest = f"{self.src}/{rel}", f"{self.out}/{rel}"  # strings: this runs for every file
        try:
            if not self.fresh and os.path.lexists(dest):
                _remove(Path(dest))
            copy_new_file(source, dest, data, self.umask)
            return None
        except OSError as exc:
            return f"not written: {exc.strerror}"

    def _replace(self, rel: str, data: bytes) -> str | None:
        """New bytes into the copy made of `rel` (which already has its mode)."""
        if not plain_rel(rel):
            return "not written: not a path inside OUT"
        try:
            if not self.dirs.ready(rel.rpartition("/")[0]):  # checked again here: never through a link
                return _LINKED_DIR
            # The copy was made by this run; O_NOFOLLOW in case a link took its place since.
            fd = os.open(f"{self.out}/{rel}", os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            return None
        except OSError as exc:
            return f"not written: {exc.strerror}"

    def links(self, symlinks: list[str]) -> None:
        for rel in symlinks:
            problem = self._link(rel)
            if problem:
                self.problems.append(f"{rel}: {problem}")
                self.failures[rel] = problem

    def _link(self, rel: str) -> str | None:
        if not plain_rel(rel):
            return "not written: not a path inside OUT"
        try:
            if not self.dirs.ready(rel.rpartition("/")[0]):
                return _LINKED_DIR
            dest = self.out / rel
            if dest.is_symlink() or dest.exists():
                _remove(dest)
            os.symlink(os.readlink(self.src / rel), dest)
            return None
        except OSError as exc:
            return f"not written: {exc.strerror}"

    def settle(self, earlier: set[str], written_links: set[str], porters: set[str]) -> tuple[list[str], list[str]]:
        """Make OUT what a fresh run would have made, where porter can prove it: remove each
        file of `earlier` (what porter's earlier run wrote there, `earlier_outputs`) that this
        run did not write (SRC no longer has it). Any other file of OUT this run did not write
        is not porter's to remove: listed, kept. `porters`: top-level names of OUT that are
        this run's report and LoRA folders. Returns (removed, unknown), sorted."""
        if self.fresh:
            return [], []
        from porter.core.files import remove_file_beneath

        written = self.copied | written_links | set(self.failures)  # a file not written now keeps its old copy
        removed = sorted(rel for rel in earlier - written if remove_file_beneath(self.out, rel))
        unknown = sorted(
            e.rel
            for e in walk(self.out)
            if e.skipped is None and e.failed is None and e.rel not in written and e.rel.split("/", 1)[0] not in porters
        )
        return removed, unknown

    def keep_dir_modes(self, rels: list[str]) -> None:
        """Give each folder of OUT that holds files of SRC the mode of SRC's folder (0700
        stays 0700), deepest first, so a read-only folder is closed after its files."""
        dirs: set[str] = set()
        for rel in rels:
            head = rel.rpartition("/")[0]
            while head and head not in dirs:
                dirs.add(head)
                head = head.rpartition("/")[0]
        for rel_dir in sorted(dirs, key=lambda d: d.count("/"), reverse=True):
            dest = f"{self.out}/{rel_dir}"
            try:
                if not self.dirs.ready(rel_dir):
                    continue
                mode = stat.S_IMODE(os.stat(f"{self.src}/{rel_dir}").st_mode)
                st = os.lstat(dest)
                if stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) != mode:
                    os.chmod(dest, mode)
            except OSError:
                continue  # the folder's files are written; its mode is the default one


def earlier_outputs(out: Path) -> set[str]:
    """The files porter's earlier run wrote into OUT, as that run's report there
    (OUT/porter_report/report.json, when porter wrote it) lists them: each converted, copied
    or skipped-but-copied file (a pipeline's skip: too large, too complex) and each file the
    selection left out (copied as it is). The report is untrusted input: only plain paths
    inside OUT, none of porter's own output folders."""
    import json

    from porter.core.tree import LORA_DIR, REPORT_DIR, porters_own

    folder = out / REPORT_DIR
    if folder.is_symlink() or not porters_own(str(folder), REPORT_DIR):
        return set()
    try:
        report = json.loads((folder / "report.json").read_bytes())
        files, left_out = report.get("files", []), report.get("left_out", {}).get("paths", [])
        written = {
            f["path"]
            for f in files
            if isinstance(f, dict)
            and isinstance(f.get("path"), str)
            and (
                f.get("status") in ("changed", "unchanged")
                or (f.get("status") == "skipped" and f.get("kind") != "other")
            )
        }
        written |= {
            p["path"]
            for p in left_out
            if isinstance(p, dict) and isinstance(p.get("path"), str) and not p["path"].endswith("/")
        }
    except (OSError, ValueError, AttributeError, TypeError):
        return set()
    return {rel for rel in written if plain_rel(rel) and rel.split("/", 1)[0] not in (REPORT_DIR, LORA_DIR)}


def write_in_place(run: RunResult, token: str | None = None) -> dict[str, str]:
    """Replace each changed file of SRC atomically, keeping its mode; {path: why} for each
    file that could not be written (it is left as it was). `token`: the run's token, in the
    name of each temporary file (InPlaceJournal)."""
    failures: dict[str, str] = {}
    for result in run.results:
        if result.new_bytes is None:
            continue
        if not inside(run.src, result.path):  # a path from a cache entry, say: never trusted
            failures[result.path] = "not written: not a path inside the tree"
            continue
        path = run.src / result.path
        try:
            atomic_write(path, result.new_bytes, token)
        except OSError as exc:
            failures[result.path] = f"not written: {exc.strerror}"
    return failures


class InPlaceJournal:
    """What proves a temporary file in SRC is porter's: the record an in-place run keeps in
    its report folder (`.porter-in-place.json`) of its pid and random token, written before
    it rewrites SRC and taken out when it is done. A run killed meanwhile leaves the record,
    and temporaries named `.NAME.<pid>.<token>.porter-tmp`; the next in-place run of the same
    SRC (same report folder) removes those (only regular files, only of a process that is
    gone) and their record. A file that merely looks like porter's temporary
    (`.data.csv.4000000.porter-tmp`) is the user's: never removed."""

    NAME = ".porter-in-place.json"

    def __init__(self, root: Path, rel: str, src: Path) -> None:
        self.root, self.rel = root, f"{rel}/{self.NAME}" if rel else self.NAME
        self.src = os.path.abspath(src)
        self.token: str | None = None

    def _entries(self) -> list[dict]:
        import json

        try:
            with open(f"{self.root}/{self.rel}", "rb") as fh:  # porter's own folder, checked when the place was chosen
                data = json.loads(fh.read())
        except (OSError, ValueError):
            return []
        if not isinstance(data, list):
            return []
        return [
            e
            for e in data
            if isinstance(e, dict)
            and isinstance(e.get("pid"), int)
            and isinstance(e.get("token"), str)
            and re.fullmatch(r"[0-9a-f]{16}", e["token"])
            and isinstance(e.get("src"), str)
        ]

    def _save(self, entries: list[dict]) -> None:
        import json

        from porter.core.files import remove_beneath, write_beneath

        if entries:
            write_beneath(self.root, self.rel, json.dumps(entries).encode("utf-8"))
        else:
            remove_beneath(self.root, self.rel)

    def remove_stale(self) -> list[str]:
        """Remove the temporaries that killed in-place runs of this SRC left, as their record
        names them; returns their paths."""
        entries = self._entries()
        gone = [e for e in entries if e["src"] == self.src and not process_may_live(e["pid"])]
        if not gone:
            return []
        names = re.compile("|".join(rf"\A\..+\.{e['pid']}\.{e['token']}{re.escape(TEMP_SUFFIX)}\Z" for e in gone), re.S)
        removed = []
        for entry in walk(Path(self.src)):
            name = entry.rel.rpartition("/")[2]
            if entry.is_symlink or entry.skipped or not names.match(name):
                continue
            try:
                if stat.S_ISREG(os.lstat(f"{self.src}/{entry.rel}").st_mode):
                    os.unlink(f"{self.src}/{entry.rel}")
                    removed.append(entry.rel)
            except OSError:
                pass
        self._save([e for e in entries if e not in gone])
        return removed

    def begin(self) -> str:
        """Record this run (before SRC is rewritten); returns the token for its temporaries."""
        from porter.core.files import run_token

        self.token = run_token()
        self._save([*self._entries(), {"src": self.src, "pid": os.getpid(), "token": self.token}])
        return self.token

    def end(self) -> None:
        """Take this run's record out: its temporaries are renamed or removed by now."""
        if self.token is not None:
            self._save([e for e in self._entries() if e.get("token") != self.token])
            self.token = None


def atomic_write(path: Path, data: bytes, token: str | None = None) -> None:
    """Replace one of the user's files: atomically, synced to disk, keeping its mode."""
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o644
    write_atomically(path, data, mode=mode, durable=True, token=token)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        import shutil  # only here: shutil loads the compression modules, a cost on every convert

        shutil.rmtree(path)
