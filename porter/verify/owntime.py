"""How long a process has run on its own account: the wall time since it started, less the
time it spent ready to run but waiting for a CPU.

`porter verify` imports modules in parallel on machines that are also busy with other
work; a module that merely waited for a core must not be reported as a slow import. Linux
keeps each task's run-queue delay in /proc/PID/schedstat (its second field, nanoseconds),
the same counter `perf sched` reads. Elsewhere the waiting time reads as zero and the own
time is the wall time. Time asleep (time.sleep, a lock, a socket) still counts: it is the
module's own doing.

Imported by the import harness, so it imports nothing of porter.
"""

from __future__ import annotations


def waited_for_cpu(pid: int) -> float:
    """Seconds the process `pid` (its main thread) has waited on a run queue since it started."""
    try:
        with open(f"/proc/{pid}/schedstat", encoding="ascii") as fh:
            return int(fh.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def own_seconds(pid: int, wall: float) -> float:
    """The part of `wall` seconds since `pid` started that it did not spend waiting for a CPU."""
    return max(0.0, wall - waited_for_cpu(pid))
