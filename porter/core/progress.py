"""Where a long command is, on one terminal line rewritten in place on stderr ("porter
convert: files 1200/3071, ~20 s left"); nothing at all when stderr is not a terminal (CI
logs, pipes, files), where such a line would only be noise.

`Progress` draws the line: a part per thing going on (verify's imports and its LoRA run go on
side by side, each set and dropped by its own thread), a count with the time left once it
can be guessed. `watching` counts the files the engine's workers finish: a worker is a
forked process, so each finished file is one byte on a pipe, which the parent reads (without
waiting) whenever it finishes a file of its own and then redraws the line. Nothing is
counted, and the engine's work is not wrapped, while no command watches.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_REDRAW_EVERY = 0.1  # seconds: a count redraws the line at most this often
_GUESS_AFTER = 2.0  # seconds: before that, the rate is too young to say the time left
QUIET_START = 0.5  # seconds a command's line waits before it is drawn: quick runs show none


class Progress:
    def __init__(
        self,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        *,
        label: str = "porter",
        delay: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`enabled`: by default, whether `stream` (stderr) is a terminal. Nothing is drawn
        in the first `delay` seconds: a command that ends sooner shows no line at all."""
        self._stream = stream or sys.stderr
        self.enabled = _is_terminal(self._stream) if enabled is None else enabled
        self._label = label
        self._clock = clock
        self._quiet_until = clock() + delay
        self._parts: dict[str, str] = {}
        self._started: dict[str, float] = {}  # when each count began, for the time left
        self._width = 0
        self._lock = threading.Lock()

    def show(self, text: str, part: str = "main") -> None:
        with self._lock:
            self._parts[part] = text
            self._render()

    def count(self, what: str, done: int, total: int, part: str | None = None) -> None:
        part = part or what
        now = self._clock()
        started = self._started.setdefault(part, now)
        text = f"{what} {done}/{total}"
        if 0 < done < total and now - started >= _GUESS_AFTER:
            text += f", ~{_duration((now - started) / done * (total - done))} left"
        self.show(text, part)

    def drop(self, part: str) -> None:
        with self._lock:
            self._started.pop(part, None)
            if self._parts.pop(part, None) is not None:
                self._render()

    def close(self) -> None:
        """Clear the line, so that what is printed next starts at the left margin."""
        with self._lock:
            self._parts.clear()
            self._started.clear()
            if self.enabled and self._width:
                self._stream.write("\r" + " " * self._width + "\r")
                self._stream.flush()
            self._width = 0

    def _render(self) -> None:
        if not self.enabled or self._clock() < self._quiet_until:
            return
        line = f"{self._label}: " + " | ".join(self._parts.values()) if self._parts else ""
        try:
            self._stream.write("\r" + line.ljust(self._width))
            self._stream.flush()
        except (OSError, ValueError):  # stderr gone: the line is only ever a courtesy
            self.enabled = False
            return
        self._width = len(line)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


class _Tally:
    """Files finished, counted across forked workers (see the module's docstring)."""

    def __init__(self, progress: Progress, what: str) -> None:
        self.progress, self.what = progress, what
        self.owner = os.getpid()
        self.done = self.total = 0
        self.drawn = float("-inf")
        self.read_end, self.write_end = os.pipe()
        try:
            os.set_blocking(self.read_end, False)
            os.set_blocking(self.write_end, False)  # a worker never waits on the line being drawn
        except OSError:  # pipes that cannot be (Windows before 3.12): no workers forked there either
            self.close()
            self.read_end = self.write_end = -1

    def expect(self, total: int) -> None:
        self._drain()
        self.done, self.total = 0, total
        self.progress.count(self.what, 0, total)

    def tick(self) -> None:
        if os.getpid() != self.owner:  # a forked worker: one byte for the parent to count
            try:
                os.write(self.write_end, b".")
            except OSError:  # the pipe is full (the parent is busy): a tick lost, a count a bit low
                pass
            return
        self.done += 1
        self._drain()
        now = time.monotonic()
        if now - self.drawn >= _REDRAW_EVERY or self.done >= self.total:  # thousands of files: a few redraws a second
            self.drawn = now
            self.progress.count(self.what, min(self.done, self.total), self.total)

    def _drain(self) -> None:
        while self.read_end >= 0:
            try:
                got = os.read(self.read_end, 65536)
            except BlockingIOError:
                return
            if not got:
                return
            self.done += len(got)

    def close(self) -> None:
        for end in (self.read_end, self.write_end):
            if end >= 0:
                os.close(end)


_WATCHING: list[_Tally] = []  # at most one: the command's


@contextmanager
def watching(progress: Progress, what: str = "files") -> Iterator[Progress]:
    """Count, on `progress`, the files the engine finishes while the block runs (nothing is
    counted when the line is not drawn)."""
    if not progress.enabled:
        yield progress
        return
    tally = _Tally(progress, what)
    _WATCHING[:] = [tally]
    try:
        yield progress
    finally:
        _WATCHING.clear()
        tally.close()
        progress.close()


def counted(work: Callable[[T], R], total: int) -> Callable[[T], R]:
    """`work` that also counts each task it finishes, when a command is watching; else
    `work` itself. Called by the engine before it hands out `total` tasks."""
    if not _WATCHING or _WATCHING[0].owner != os.getpid():  # none, or a forked step's own work
        return work
    tally = _WATCHING[0]
    tally.expect(total)

    def work_and_count(task: T) -> R:
        result = work(task)
        tally.tick()
        return result

    return work_and_count
