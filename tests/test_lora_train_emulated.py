"""The LoRA entry point's own tests, run again on the emulated MLU (porter/emulator).

train_lora.py --device mlu under the emulator: the loss falls, a checkpoint resumes at its
step, and run_lora.sh with two processes trains over cncl. The helpers and the workspace
(tiny models built in the test, no download) are tests/test_lora_train.py's.
"""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")

from porter.emulator import environment  # noqa: E402
from porter.emulator.launch import prepare  # noqa: E402
from test_lora_train import assert_loss_falls, launch, losses, train, workspace  # noqa: E402,F401

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def emulated() -> dict:
    prepare(quiet=True)  # the extension, built once into porter's cache
    return {
        k: v
        for k, v in environment(devices=2, version="2.4").items()
        if k in ("PYTHONPATH", "PATH", "PORTER_EMULATE_DEVICES", "PORTER_EMULATE_VERSION")
    }


def test_trains_and_resumes_on_the_emulated_mlu(workspace, emulated):
    out = workspace["root"] / "emulated_single"
    proc = train(
        workspace["mlu"],
        workspace["model"],
        workspace["data"],
        out,
        "--max_steps",
        "20",
        "--save_steps",
        "10",
        device="mlu",
        env=emulated,
    )
    assert "device=mlu" in proc.stdout, proc.stdout[-2000:]
    assert_loss_falls([loss for _, loss in losses(proc.stdout)])
    resumed = workspace["root"] / "emulated_resumed"
    shutil.copytree(out, resumed)
    proc = train(
        workspace["mlu"],
        workspace["model"],
        workspace["data"],
        resumed,
        "--max_steps",
        "22",
        "--save_steps",
        "10",
        "--resume_from_checkpoint",
        "last",
        device="mlu",
        env=emulated,
    )
    assert [step for step, _ in losses(proc.stdout)] == [21, 22], proc.stdout[-2000:]


def test_two_processes_over_cncl(workspace, emulated):
    out = workspace["root"] / "emulated_ddp"
    proc = launch(
        workspace["mlu"],
        workspace["model"],
        workspace["data"],
        out,
        "--max_steps",
        "12",
        device="mlu",
        nproc=2,
        base_env=emulated,
    )
    assert "world_size=2" in proc.stdout and "device=mlu" in proc.stdout, proc.stdout[-2000:]
    assert_loss_falls([loss for _, loss in losses(proc.stdout)])
