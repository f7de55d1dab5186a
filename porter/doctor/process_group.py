"""The process-group backend initialises: two ranks (one on a single card) run
init_process_group with the target's backend (cncl, hccl, nccl) and all_reduce a tensor on
their cards."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from porter.doctor.model import FAIL, OK, SKIP, WARN, Result
from porter.doctor.runtime import Runtime

WORKER = Path(__file__).with_name("pg_worker.py")


@dataclass(frozen=True)
class Rank:
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str


def check_process_group(rt: Runtime, timeout: float = 120.0, worker: Path = WORKER) -> Result:
    name = "process-group"
    if not rt.vendor_ready() or rt.device_count() == 0:
        return Result(name, SKIP, "needs a card (see the devices check)")
    world = 2 if rt.device_count() >= 2 else 1
    args = [rt.device_type, rt.backend]
    package = rt.spec.package
    if package is not None and package != f"torch_{rt.device_type}":  # the worker's guess otherwise
        args.append(package)
    fix = f"See the whole log: {rt.spec.collective_debug} torchrun --standalone --nproc_per_node {world} {worker} {' '.join(args)}"
    ranks = run_ranks([sys.executable, str(worker), *args], world, timeout)
    expected = [float(sum(range(1, world + 1)))] * 2
    outs = [_last_json(rank.stdout) for rank in ranks]
    agreed = all(out is not None and out.get("value") == expected for out in outs)
    # The rank that failed first says why; a rank stopped because of it, or hung, says less.
    stopped = [(i, r) for i, r in enumerate(ranks) if r.returncode not in (None, 0)] or [
        (i, r) for i, r in enumerate(ranks) if r.returncode is None
    ]
    if stopped and not agreed:
        index, rank = stopped[0]
        return Result(name, FAIL, f"{rt.backend}: rank {index} {_ended(rank, timeout)}", fix)
    if not agreed:
        got = [out.get("value") if out else None for out in outs]
        return Result(name, FAIL, f"{rt.backend}: all_reduce gave {got}, expected {expected} on every rank", fix)
    cards = ", ".join(str(out["device"]) for out in outs if out is not None)
    ranks_run = "2 processes" if world == 2 else "1 process (one card)"
    used = outs[0]["backend"] if outs[0] is not None else rt.backend
    done = f"{used}: {ranks_run} initialised it and all_reduce agreed on {cards}"
    if stopped:  # every rank had its result, and one failed after it, at its exit: so would a training run
        index, rank = stopped[0]
        return Result(name, WARN, f"{done}, but rank {index} then {_ended(rank, timeout)}", fix)
    return Result(name, OK, done)


def _ended(rank: Rank, timeout: float) -> str:
    what = f"exited with {rank.returncode}" if rank.returncode is not None else f"did not finish in {timeout:g} s"
    return what + _last_error(rank.stderr, ": ")


def run_ranks(cmd: list[str], world: int, timeout: float) -> list[Rank]:
    """Start `world` ranks of `cmd` on a free local port; kill those still running at `timeout`."""
    port = free_port()
    base = dict(
        os.environ,
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        WORLD_SIZE=str(world),
        LOCAL_WORLD_SIZE=str(world),
        PORTER_DOCTOR_PG_TIMEOUT=str(max(10, int(timeout) - 5)),
    )
    base.setdefault("OMP_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory(prefix="porter-doctor-") as tmp:
        procs = []
        for rank in range(world):
            out = open(Path(tmp) / f"{rank}.out", "w+", encoding="utf-8", errors="replace")
            err = open(Path(tmp) / f"{rank}.err", "w+", encoding="utf-8", errors="replace")
            env = dict(base, RANK=str(rank), LOCAL_RANK=str(rank))
            procs.append((subprocess.Popen(cmd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL), out, err))
        deadline = time.monotonic() + timeout
        # A rank that fails leaves the other waiting for it: stop them all at the first failure,
        # unless it failed after its result (at its exit), when the others have theirs to finish.
        while time.monotonic() < deadline and any(p.poll() is None for p, _, _ in procs):
            if any(p.poll() not in (None, 0) and not _has_result(out) for p, out, _ in procs):
                break
            time.sleep(0.1)
        ranks = []
        for proc, out, err in procs:
            code = proc.poll()
            if code is None:
                proc.kill()
                proc.wait()
            ranks.append((code, out, err))
        result = []
        for code, out, err in ranks:
            out.seek(0)
            err.seek(0)
            result.append(Rank(code, out.read(), err.read()))
            out.close()
            err.close()
        return result


def _has_result(out) -> bool:
    """Whether a rank's output file holds its JSON line yet."""
    out.flush()
    out.seek(0)
    return _last_json(out.read()) is not None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _last_json(stdout: str) -> dict | None:
    for line in reversed(stdout.strip().splitlines()):
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict):
            return found
    return None


def _last_error(stderr: str, prefix: str, limit: int = 400) -> str:
    """The error line of a traceback (the last line that names an exception), or the last line."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    named = [line for line in lines if ("Error" in line.split(":", 1)[0] or "Exception" in line.split(":", 1)[0])]
    text = (named or lines)[-1]
    return prefix + (text if len(text) <= limit else text[: limit - 3] + "...")
