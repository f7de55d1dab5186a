"""Run a command with a time limit that ends all of it, and say what was still running.

`subprocess.run(..., timeout=)` kills only the process it started and then waits for the
output pipes to close: a torchrun whose rank is stuck in a collective keeps them open, so the
wait never ends (porter verify hung there once). Here the command gets its own process group;
at the limit every process in it is asked for its Python stacks (SIGABRT, which faulthandler
answers when PYTHONFAULTHANDLER is set), then the whole group is killed. The result names the
processes that were still running and, for torchrun's workers, their rank.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

# After the stacks are asked for: how long the processes get to write them and end.
_DUMP_GRACE = 10.0


@dataclass
class Stuck:
    pid: int
    rank: str | None  # torchrun's RANK of a worker; None for torchrun itself or a shell
    command: str
    state: str = "R"  # /proc's state letter; "Z": ended, not yet reaped


@dataclass
class Bounded:
    returncode: int | None  # None: the limit ended it
    stdout: str
    stderr: str
    stuck: list[Stuck] = field(default_factory=list)

    @property
    def timed_out(self) -> bool:
        return self.returncode is None

    def stuck_summary(self) -> str:
        """What the limit found still running: 'rank 1 (pid 4242)' for torchrun's workers,
        the command line for anything else."""
        workers = sorted((s for s in self.stuck if s.rank is not None), key=lambda s: (len(s.rank or ""), s.rank))
        others = [s for s in self.stuck if s.rank is None]
        named = [f"rank {s.rank} (pid {s.pid})" for s in workers] or [f"pid {s.pid} ({s.command[:60]})" for s in others]
        return ", ".join(named) + " still running" if named else "nothing left running"


def run_bounded(
    cmd: list[str] | str, timeout: float, env: dict[str, str], cwd: str | os.PathLike | None = None, shell: bool = False
) -> Bounded:
    env = {**env, "PYTHONFAULTHANDLER": "1"}
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, shell=shell, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    # Read by threads, not communicate(): that waits for every holder of the pipes, and a
    # process the command left behind may hold them for ever.
    out, err = _Reader(proc.stdout), _Reader(proc.stderr)
    stuck: list[Stuck] = []
    try:
        returncode: int | None = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        returncode, stuck = None, [s for s in group_members(proc.pid) if s.state != "Z"]
        _signal_group(proc.pid, signal.SIGABRT)
        _wait_for_group(proc.pid, _DUMP_GRACE)
    # Whether it ended or not, nothing it started may outlive it, holding a port or the pipes.
    _signal_group(proc.pid, signal.SIGKILL)
    proc.wait()
    return Bounded(returncode, out.text(), err.text(), stuck)


class _Reader(threading.Thread):
    def __init__(self, pipe) -> None:
        super().__init__(daemon=True)
        self.pipe, self.chunks = pipe, []
        self.start()

    def run(self) -> None:
        for chunk in iter(lambda: self.pipe.read1(65536), b""):
            self.chunks.append(chunk)

    def text(self) -> str:
        # A process outside the group (one that left it) may still hold the pipe: do not wait for it.
        self.join(_DUMP_GRACE)
        return b"".join(self.chunks).decode(errors="replace")


def _wait_for_group(pgid: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(s.state != "Z" for s in group_members(pgid)):
        time.sleep(0.2)


def group_members(pgid: int) -> list[Stuck]:
    """The processes of process group `pgid` (from /proc; empty where there is none)."""
    members = []
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return members
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                stat = fh.read()
            # Fields after the command (which may hold spaces and parentheses): state ppid pgrp ...
            state, _, pgrp = stat[stat.rindex(b")") + 2 :].split()[:3]
            if int(pgrp) != pgid:
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                command = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
            members.append(Stuck(pid, _rank(pid), command, state.decode()))
        except (OSError, ValueError, IndexError):
            continue  # it ended meanwhile, or is not ours to read
    return members


def _rank(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            for entry in fh.read().split(b"\0"):
                if entry.startswith(b"RANK="):
                    return entry[5:].decode(errors="replace")
    except OSError:
        pass
    return None


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
