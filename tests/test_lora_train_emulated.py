"""The LoRA entry point's own tests, run again on each emulated device (porter/emulator).

train_lora.py --device mlu (npu) under the emulator: the loss falls, a checkpoint resumes at
its step, and run_lora.sh with two processes trains over cncl (hccl). The helpers and the
workspace (tiny models built in the test, no download) are tests/test_lora_train.py's.
"""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")

from porter.emulator import apis, environment  # noqa: E402
from porter.emulator.launch import prepare  # noqa: E402
from porter.emulator.targets import DEVICES  # noqa: E402
from test_lora_train import assert_loss_falls, launch, losses, train, workspace  # noqa: E402,F401

pytestmark = pytest.mark.slow

EMULATED = tuple(DEVICES)  # every target the emulator can be: mlu, npu


@pytest.fixture(scope="module", params=EMULATED)
def emulated(request) -> tuple[str, dict]:
    """The device, and the environment that emulates it on 2 cards (its newest API list)."""
    target = request.param
    prepare(quiet=True)  # the extension, built once into porter's cache
    env = environment(devices=2, version=apis.default_version(target), target=target)
    keep = ("PYTHONPATH", "PATH", "PORTER_EMULATE_DEVICES", "PORTER_EMULATE_VERSION")
    return target, {k: v for k, v in env.items() if k in keep}


def test_trains_and_resumes_on_the_emulated_device(workspace, emulated):
    target, env = emulated
    out = workspace["root"] / f"emulated_single_{target}"
    proc = train(
        workspace[target],
        workspace["model"],
        workspace["data"],
        out,
        "--max_steps",
        "20",
        "--save_steps",
        "10",
        device=target,
        env=env,
    )
    assert f"device={target}" in proc.stdout, proc.stdout[-2000:]
    assert_loss_falls([loss for _, loss in losses(proc.stdout)])
    resumed = workspace["root"] / f"emulated_resumed_{target}"
    shutil.copytree(out, resumed)
    proc = train(
        workspace[target],
        workspace["model"],
        workspace["data"],
        resumed,
        "--max_steps",
        "22",
        "--save_steps",
        "10",
        "--resume_from_checkpoint",
        "last",
        device=target,
        env=env,
    )
    assert [step for step, _ in losses(proc.stdout)] == [21, 22], proc.stdout[-2000:]


def test_two_processes_over_the_vendor_backend(workspace, emulated):
    target, env = emulated
    out = workspace["root"] / f"emulated_ddp_{target}"
    proc = launch(
        workspace[target],
        workspace["model"],
        workspace["data"],
        out,
        "--max_steps",
        "12",
        device=target,
        nproc=2,
        base_env=env,
    )
    assert "world_size=2" in proc.stdout and f"device={target}" in proc.stdout, proc.stdout[-2000:]
    assert f"backend={DEVICES[target].backend}" in proc.stdout, proc.stdout[-2000:]
    assert_loss_falls([loss for _, loss in losses(proc.stdout)])
