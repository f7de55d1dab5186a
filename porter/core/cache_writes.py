"""A cache write that fails is skipped: said once, never the run's failure.

porter's caches (results and the tree index, parsed data files, compiled templates) only save
time: a run that cannot write them (a full disk, a read-only or misplaced cache directory, a
quota) gives the result a run with `--no-cache` gives. Every cache write goes through
`cache_write`: the first that fails is one warning on stderr, and no more writes are tried
in that directory by this process (on a full disk each would fail too, after its work).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

# The process that loaded porter: forked workers write caches too (a data file parsed in a
# worker), silently, so that a run says it once whatever its number of workers.
_MAIN_PID = os.getpid()
_failed: dict[str, OSError] = {}  # cache directory -> the first write into it that failed
_warned: list[bool] = [False]


def cache_write(directory: Path, write: Callable[[], object]) -> bool:
    """Run `write`, a write into the cache `directory`; False when it failed with an OSError
    (or an earlier write into the directory did), which is then skipped."""
    key = os.fspath(directory)
    if key in _failed:
        return False
    try:
        write()
    except OSError as exc:
        _failed[key] = exc
        _warn(directory, exc)
        return False
    return True


def _warn(directory: Path, exc: OSError) -> None:
    if _warned[0] or os.getpid() != _MAIN_PID:
        return
    _warned[0] = True
    where = exc.filename if exc.filename is not None else directory
    print(
        f"porter: warning: cache not written ({where}: {exc.strerror or exc}); "
        f"going on without it (--no-cache avoids it)",
        file=sys.stderr,
    )
