"""porter verify's time limit ends the whole command and names what was still running: a
torchrun rank stuck in a collective keeps the output pipes open, and a limit that kills only
torchrun waits for them forever."""

import os
import sys
import threading
import time

from porter.verify.bounded import run_bounded

# torchrun's shape: a parent that started a worker (RANK=1) and both wait for ever.
STUCK = """
import os, subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time\\nprint('worker up', flush=True)\\ntime.sleep(600)"],
                 env={**os.environ, "RANK": "1"})
time.sleep(600)
"""


def _run_in_thread(*args, **kwargs):
    box = {}
    thread = threading.Thread(target=lambda: box.update(result=run_bounded(*args, **kwargs)), daemon=True)
    thread.start()
    thread.join(120)  # a generous bound: without the group kill this never returns
    assert not thread.is_alive(), "run_bounded did not return: a process it started still holds the output"
    return box["result"]


def test_a_stuck_worker_is_ended_named_and_its_stack_kept():
    result = _run_in_thread([sys.executable, "-c", STUCK], 5, env=dict(os.environ))
    assert result.timed_out and result.returncode is None
    assert "worker up" in result.stdout
    summary = result.stuck_summary()
    assert summary.startswith("rank 1 (pid ") and summary.endswith("still running"), summary
    # faulthandler's stacks of the stuck processes, the worker's among them.
    assert "most recent call first" in result.stderr and 'File "<string>", line 3' in result.stderr
    worker = next(s for s in result.stuck if s.rank == "1")
    assert _ends(worker.pid)


def test_a_command_that_ends_leaves_nothing_behind_and_keeps_its_output():
    script = (
        "import subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], stdout=subprocess.DEVNULL)\n"
        "print(p.pid); sys.exit(3)"
    )
    result = _run_in_thread([sys.executable, "-c", script], 60, env=dict(os.environ))
    assert result.returncode == 3 and not result.timed_out
    orphan = int(result.stdout.strip())
    assert _ends(orphan)


def _ends(pid: int) -> bool:
    """The process is gone or a zombie within a few seconds (SIGKILL is not instant)."""
    for _ in range(50):
        if _is_zombie(pid):
            return True
        time.sleep(0.2)
    return False


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        return stat[stat.rindex(b")") + 2 :].split()[0] == b"Z"
    except OSError:
        return True
