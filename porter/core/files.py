"""Writing a file so that nobody sees half of it: the one atomic writer of porter.

In-place conversion, the result cache and the parsed-data cache all write through here.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Collection
from pathlib import Path


def write_atomically(
    path: Path, data: bytes, *, mode: int | None = None, durable: bool = False, token: str | None = None
) -> None:
    """Write `data` to a temporary file beside `path`, then rename it over `path`.

    A reader, or a crash at any moment, sees the old file or the new one, never half of one.
    The temporary name is this process's own (no other live process has its pid; `token`, a
    run's random token, makes it one that a record of the run can prove porter's: see
    porter/engine/output.InPlaceJournal) and is created anew: whatever is already at that
    name (a file of the user's, a link) is neither written, followed nor removed. `durable`
    also syncs the data to disk before the rename (the user's own files); `mode` sets the
    new file's permissions. Raises OSError naming `path`; the temporary file is removed on
    failure.
    """
    tmp = path.with_name(temporary_name(path.name, token))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(tmp, flags, 0o600 if mode is None else mode)
    except FileExistsError:
        raise OSError(
            errno.EEXIST,
            f"something is at porter's temporary name {tmp.name} already; it is not porter's to write over",
            str(path),
        ) from None
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o644 if mode is None else mode)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and exc.errno is not None:
            raise OSError(exc.errno, exc.strerror, str(path)) from None  # the path, not the temporary
        raise


# --- porter's own outputs: written beneath a root, never through a link -------------------

TEMP_SUFFIX = ".porter-tmp"


def temporary_name(name: str, token: str | None = None) -> str:
    """The name of porter's temporary file for `name`: `.NAME.<pid>.porter-tmp`, or with a
    run's token `.NAME.<pid>.<token>.porter-tmp`."""
    return f".{name}.{os.getpid()}.{token}{TEMP_SUFFIX}" if token else f".{name}.{os.getpid()}{TEMP_SUFFIX}"


def run_token() -> str:
    """A random token for this run's temporary names (16 hex digits: no file of the user's
    has it by chance)."""
    import secrets

    return secrets.token_hex(8)


class LinkRefused(OSError):
    """A path porter was to write through is a symbolic link: refused, never followed."""


def copy_new_file(source: str, dest: str, data: bytes | None = None, umask: int = 0o022) -> None:
    """Create `dest` (never through a link there) with the bytes of `source`, or with `data`
    instead, and the mode of `source`, exactly (as `cp` without -p, less the umask).

    Lean on system calls, as a converted tree is mostly copies and creating files is the
    slowest thing porter does on some file systems: open, fstat, open, sendfile (in the
    kernel, no copy through Python), close; a chmod only when the umask took a bit away.
    `source` is opened non-blocking, so that a named pipe put there since the walk is refused
    rather than waited on."""
    fin = os.open(source, os.O_RDONLY | os.O_NONBLOCK)
    try:
        st = os.fstat(fin)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        mode = stat.S_IMODE(st.st_mode)
        fout = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
        try:
            if data is not None:
                _write_fd(fout, data)
            else:
                _send_all(fin, fout)
            if mode & umask:
                os.fchmod(fout, mode)
        finally:
            os.close(fout)
    finally:
        os.close(fin)


def _send_all(fin: int, fout: int) -> None:
    offset = 0
    try:
        while True:
            sent = os.sendfile(fout, fin, offset, 1 << 30)
            if sent == 0:
                return
            offset += sent
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOSYS) or offset:
            raise
    while chunk := os.read(fin, 1 << 20):  # where sendfile cannot copy between these files
        _write_fd(fout, chunk)


def describe(exc: OSError) -> str:
    """One line naming the path and the cause of an OSError: `PATH: cause`."""
    where = exc.filename if exc.filename is not None else "?"
    if isinstance(where, bytes):
        where = os.fsdecode(where)
    return f"{where}: {exc.strerror or exc}"


def _refuse_link(path: str) -> LinkRefused:
    return LinkRefused(errno.ELOOP, "is a symbolic link; porter never writes through a link", path)


# --- the one check of where porter writes ------------------------------------------------
#
# Every writer (OUT, the report and LoRA folders, in-place rewrites, the caches, verify.json)
# asks these before it writes: a path that comes from outside porter's own walk (a cache
# entry, a report of an earlier run) is untrusted input, and a folder porter is about to
# write into may be a link planted to lead it elsewhere.


def plain_rel(rel: str) -> bool:
    """Whether `rel` is a path relative to a tree that stays inside it: POSIX separators, not
    empty, not absolute, no empty, `.` or `..` part, no NUL."""
    return (
        bool(rel)
        and not rel.startswith("/")
        and "\0" not in rel
        and all(p not in ("", ".", "..") for p in rel.split("/"))
    )


def inside(root: Path | str, rel: str) -> bool:
    """Whether `root/rel` is inside `root`: `rel` is plain (`plain_rel`) and no link on the
    way to it (its folders, resolved) leads out of `root`. The file itself may be a link:
    writers replace it, they never write through it."""
    if not plain_rel(rel):
        return False
    folder = rel.rpartition("/")[0]
    if not folder:
        return True
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, folder))
    return real == real_root or real.startswith(real_root.rstrip("/") + "/")


def refuse_linked_folder(path: Path | str, way_out: str = "name the folder itself") -> None:
    """Raise LinkRefused if the folder porter is to write into (OUT, a report folder) is a
    symbolic link: writing through it would write wherever it points. Nothing is there, or a
    real folder: fine (what is below it is checked as it is written). `way_out`: what the
    user can do instead, for the message."""
    if os.path.islink(path):
        raise LinkRefused(
            errno.ELOOP,
            f"is a symbolic link (to {os.readlink(path)}); porter never writes through a link: {way_out}",
            os.fspath(path),
        )


def _parts(rel: str) -> list[str]:
    if not plain_rel(rel):
        raise OSError(errno.EINVAL, "not a plain relative path", rel)
    return rel.split("/")


def open_dir_beneath(root: Path, rel: str = "", *, create: bool = True, mode: int = 0o777) -> int:
    """A file descriptor of the directory `root/rel`, reached without following any link below
    `root` (made if missing and `create`); `root` itself is made if missing (it is the path
    the user named). Raises LinkRefused for a link on the way, OSError naming the path else."""
    root_s = str(root)
    try:
        if create:
            os.makedirs(root_s, exist_ok=True)
        fd = os.open(root_s, os.O_RDONLY | os.O_DIRECTORY)
    except FileExistsError as exc:
        raise OSError(errno.ENOTDIR, "exists and is not a directory", root_s) from exc
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, exc.filename or root_s) from exc
    path = root_s
    try:
        for name in _parts(rel) if rel else []:
            path = f"{path}/{name}"
            try:
                st = os.lstat(name, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise OSError(errno.ENOENT, "no such directory", path) from None
                try:
                    os.mkdir(name, mode, dir_fd=fd)
                except FileExistsError:
                    pass  # another process made it: checked below like any other
                st = os.lstat(name, dir_fd=fd)
            if stat.S_ISLNK(st.st_mode):
                raise _refuse_link(path)
            if not stat.S_ISDIR(st.st_mode):
                raise OSError(errno.ENOTDIR, "exists and is not a directory", path)
            try:
                nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # swapped for a link meanwhile
                    raise _refuse_link(path) from None
                raise OSError(exc.errno, exc.strerror, path) from None
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_fd(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_beneath(root: Path, rel: str, data: bytes, *, mode: int | None = None) -> Path:
    """Write porter's own output file `root/rel` (a report, the patch, a LoRA file, a cache
    entry): folders made as needed, never through a symbolic link below `root`, through a
    temporary file renamed over the old one (a reader, or a crash, sees the old file or the
    new one; a hard link elsewhere keeps its old content). Returns the path written.

    Raises LinkRefused (a link on the way or at `rel`) or OSError whose filename is the path
    concerned (no space left, file too large, not a directory, permission denied)."""
    folder, _, name = rel.rpartition("/")
    _parts(name)
    path = f"{root}/{rel}"
    mode = (0o666 & ~_umask()) if mode is None else mode
    dfd = open_dir_beneath(root, folder)
    tmp = f".{name}.{os.getpid()}{TEMP_SUFFIX}"
    try:
        try:
            st = os.lstat(name, dir_fd=dfd)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise _refuse_link(path)
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise OSError(errno.EISDIR, "exists and is a directory", path)
        try:
            os.unlink(tmp, dir_fd=dfd)
        except FileNotFoundError:
            pass
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dfd)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, path) from None
        try:
            try:
                _write_fd(fd, data)
                os.fchmod(fd, mode)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException as exc:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
            if isinstance(exc, OSError) and not isinstance(exc, LinkRefused):
                raise OSError(exc.errno, exc.strerror, path) from None
            raise
    finally:
        os.close(dfd)
    return Path(path)


def remove_beneath(root: Path, rel: str) -> None:
    """Remove porter's own file `root/rel` if it is there (a link there is removed, not
    followed); folders are reached as by write_beneath. Raises OSError naming the path."""
    folder, _, name = rel.rpartition("/")
    _parts(name)
    dfd = open_dir_beneath(root, folder)
    try:
        os.unlink(name, dir_fd=dfd)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, f"{root}/{rel}") from None
    finally:
        os.close(dfd)


def remove_file_beneath(root: Path, rel: str) -> bool:
    """Remove the file or link `root/rel` (`rel` untrusted: it must be plain, and no link on
    the way is followed; a folder is never removed), then the folders above it that this
    leaves empty, up to `root`. Nothing is made. True when it removed the file."""
    if not plain_rel(rel):
        return False
    folder, _, name = rel.rpartition("/")
    try:
        dfd = open_dir_beneath(root, folder, create=False)
    except OSError:  # the folder is gone, or is a link: nothing of porter's to remove there
        return False
    try:
        if stat.S_ISDIR(os.lstat(name, dir_fd=dfd).st_mode):
            return False
        os.unlink(name, dir_fd=dfd)
    except OSError:
        return False
    finally:
        os.close(dfd)
    while folder:
        parent, _, last = folder.rpartition("/")
        try:
            pfd = open_dir_beneath(root, parent, create=False)
        except OSError:
            break
        try:
            os.rmdir(last, dir_fd=pfd)
        except OSError:  # not empty (or not removable): the folders above are not empty either
            break
        finally:
            os.close(pfd)
        folder = parent
    return True


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def remove_stale_temporaries_in(folder: Path, written: Collection[str]) -> None:
    """Remove the temporary files porter's killed writers left in one of porter's output
    folders (not below it), for the files porter writes there (`written`: a --report-dir
    folder may hold the user's files too, and `.notes.4000000.porter-tmp` is one of them),
    only of processes that are gone."""
    try:
        names = [n for n in os.listdir(folder) if n.endswith(TEMP_SUFFIX)]
    except OSError:
        return
    for name in names:
        m = _STALE.match(name)
        if m is not None and m.group(1) in written and stale_temporary(str(folder), name):
            try:
                os.unlink(folder / name)
            except OSError:
                pass


_STALE = re.compile(r"\A\.(.+)\.([0-9]+)" + re.escape(TEMP_SUFFIX) + r"\Z", re.S)


def stale_temporary(folder: str, name: str) -> bool:
    """Whether `folder/name` is a temporary file a porter process made and left behind (it was
    killed): porter's name pattern, a regular file, and no live process has its pid."""
    m = _STALE.match(name)
    if m is None:
        return False
    try:
        st = os.lstat(f"{folder}/{name}")
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    # A live process (this one, or another porter writing right now) keeps its temporaries.
    return not process_may_live(int(m.group(2)))


def process_may_live(pid: int) -> bool:
    """Whether process `pid` may be alive: this process, one that answers, or one we may not
    signal (someone else's, or not a pid at all); False only when it is proven gone."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True
