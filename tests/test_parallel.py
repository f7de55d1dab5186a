"""Forked workers: results in task order, equal to a serial run, whoever computed them."""

from __future__ import annotations

import os
import time

import pytest

from porter.engine.parallel import POOL_THRESHOLD, ForkedMap, map_files

PARENT = os.getpid()
SIZE = POOL_THRESHOLD // 50  # every task "weighs" enough that a pool is used


def _square(task: tuple[int, int]) -> tuple[int, int]:
    time.sleep(0.002)  # long enough that every process gets some tasks
    return task[0] * task[0], os.getpid()


def _dies_in_a_worker(task: tuple[int, int]) -> int:
    if os.getpid() != PARENT:
        os._exit(3)  # every worker killed at its first task (out of memory, a signal)
    time.sleep(0.002)
    return task[0] + 1


def _fails_in_parent(task: tuple[int, int]) -> int:
    if os.getpid() == PARENT:
        raise RuntimeError("porter bug")
    time.sleep(0.3)  # the workers are slow, so the parent surely takes a task (even on a busy machine)
    return task[0]


def _tasks(n: int) -> list[tuple[int, int]]:
    return [(i, SIZE) for i in range(n)]


def test_results_come_back_in_task_order_from_several_processes():
    results = map_files(_square, _tasks(200), size=lambda t: t[1], jobs=2)
    assert [r[0] for r in results] == [i * i for i in range(200)]
    assert len({pid for _, pid in results}) == 2  # this process and one forked worker


def test_forked_map_works_beside_this_process_until_finish():
    offset = 5

    def work(x: int) -> tuple[int, int]:  # any callable: it is not pickled
        if os.getpid() == PARENT:
            time.sleep(0.01)  # slow here, so the worker takes tasks however late it starts
        return x + offset, os.getpid()

    job = ForkedMap(work, list(range(300)), jobs=2)
    time.sleep(0.05)  # this process does something else; the worker goes on
    results = job.finish()
    assert [r for r, _ in results] == [x + 5 for x in range(300)]
    assert {pid for _, pid in results} - {PARENT}, "the forked worker took no task"


def test_forked_map_whose_worker_dies_is_finished_here():
    job = ForkedMap(lambda x: os._exit(3) if os.getpid() != PARENT else x * 2, list(range(20)), jobs=2)
    assert job.finish() == [x * 2 for x in range(20)]


def test_a_dead_worker_costs_time_not_results():
    results = map_files(_dies_in_a_worker, _tasks(100), size=lambda t: t[1], jobs=3)
    assert results == [i + 1 for i in range(100)]


def test_an_error_here_stops_the_run_and_leaves_no_worker_behind():
    with pytest.raises(RuntimeError, match="porter bug"):
        map_files(_fails_in_parent, _tasks(100), size=lambda t: t[1], jobs=2)
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # every worker was waited for


def test_small_runs_stay_in_this_process():
    results = map_files(_square, [(i, 10) for i in range(10)], size=lambda t: t[1], jobs=4)
    assert {pid for _, pid in results} == {PARENT}


def test_a_bundle_goes_to_one_process():
    tasks = _tasks(120)
    results = map_files(_square, tasks, size=lambda t: t[1], jobs=2, bundle=lambda t: "yaml" if t[0] % 4 == 0 else None)
    assert [r[0] for r in results] == [i * i for i in range(120)]
    assert len({pid for i, (_, pid) in enumerate(results) if i % 4 == 0}) == 1
    assert len({pid for _, pid in results}) == 2


def _plus_one(task: tuple[int, int]) -> int:
    return task[0] + 1


def test_more_tasks_than_tokens_are_handed_out_in_groups():
    n = 3 * 4_096 + 5  # more tasks than the pipe holds tokens
    results = map_files(_plus_one, [(i, 1_000) for i in range(n)], size=lambda t: t[1], jobs=2)
    assert results == [i + 1 for i in range(n)]


def test_steps_side_by_side_report_the_first_failure_in_step_order(monkeypatch):
    # The worker takes the first step (this process is held back) and fails; this process
    # then fails the second: what is raised is the first step's error, as in one process.
    from porter.engine import parallel

    finish = parallel.ForkedMap.finish

    def late(self):
        time.sleep(0.3)
        return finish(self)

    def first():
        raise OSError("report.html: File too large")

    def second():
        raise OSError("porter_lora/train_lora.py: File too large")

    monkeypatch.setattr(parallel.ForkedMap, "finish", late)
    for _ in range(3):
        with pytest.raises(OSError, match="report.html"):
            parallel.side_by_side([first, second], jobs=2)
