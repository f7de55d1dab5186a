"""What packaging files used to miss: conda environment files, extras that install a CUDA-only
package, torchvision/torchaudio needing the target's build (once per file), pins carried to
a renamed distribution, and the one `pip install` reader that Dockerfiles and scripts share."""

from __future__ import annotations

import pytest
import yaml

from porter.engine.pipeline import check_bytes, convert_bytes
from porter.engine.registry import type_for
from porter.filetypes.requirements import pip_install_start
from porter.rules import TARGETS, ActiveRules, load_rules


def convert(rel: str, text: str, target: str = "mlu"):
    return convert_bytes(rel, text.encode(), ActiveRules(load_rules(target)))[1]


def findings(rel: str, text: str, target: str = "mlu"):
    return check_bytes(rel, text.encode(), ActiveRules(load_rules(target))).findings


@pytest.mark.parametrize(
    "rel",
    [
        "environment.yml",
        "env/environment.yaml",
        "environment-cuda.yml",
        "conda.yml",
        "conda_gpu.yaml",
        "case.environment.yml",
    ],
)
def test_conda_files_have_their_own_type(rel):
    assert type_for(rel, b"").name == "conda"


@pytest.mark.parametrize("rel", ["environments.yml", "my_environment.yml", "configs/train.yaml", "docker-compose.yml"])
def test_other_yaml_is_not_conda(rel):
    assert type_for(rel, b"").name != "conda"


CONDA = """\
name: ft
dependencies:
  - python=3.10
  - cudatoolkit=11.8
  - pip:
    - bitsandbytes>=0.41
    - peft
"""


def test_conda_drops_stay_yaml_and_recoverable():
    result = convert("environment.yml", CONDA)
    new = result.new_bytes.decode()
    loaded = yaml.safe_load(new)
    assert loaded["dependencies"] == ["python=3.10", {"pip": ["peft"]}]
    assert [e.line for e in result.edits] == [4, 6]  # line numbers of what was commented out
    restored = "\n".join(
        line.split(": - ", 1)[0].split("# porter")[0] + "- " + line.split(": - ", 1)[1]
        if "# porter PRT410" in line
        else line
        for line in new.split("\n")
    )
    assert restored == CONDA
    assert not convert("environment.yml", new).edits  # idempotent


def test_conda_never_empties_a_list():
    text = "name: q\ndependencies:\n  - numpy\n  - pip:\n    - bitsandbytes\n"
    result = convert("environment.yml", text)
    assert result.new_bytes is None  # reported, not commented out: `pip:` would become null
    assert [f.rule for f in result.findings] == ["PRT410"]


def test_conda_cuda_environment_makes_torchvision_an_error():
    text = "dependencies:\n  - pytorch\n  - torchvision\n  - pytorch-cuda=12.1\n"
    vision = [f for f in findings("environment.yml", text) if f.rule == "PRT418"]
    assert [(f.line, f.severity) for f in vision] == [(3, "error")]
    plain = [
        f for f in findings("environment.yml", "dependencies:\n  - pytorch\n  - torchvision\n") if f.rule == "PRT418"
    ]
    assert [f.severity for f in plain] == ["warning"]


def test_conda_keys_are_not_a_run_config():
    assert not findings("environment.yml", "name: x\ndevice: cuda\ndependencies:\n  - numpy\n")


def test_torch_family_is_one_finding_per_file_with_the_other_places():
    text = "torch>=2.1\ntorchvision>=0.16\ntorchaudio\n"
    for target in TARGETS:
        vision = [f for f in findings("requirements.txt", text, target) if f.rule == "PRT418"]
        assert len(vision) == 1
        assert vision[0].line == 2 and vision[0].severity == "warning"
        assert "torchaudio (line 3)" in vision[0].message


@pytest.mark.parametrize(
    "text",
    [
        "--extra-index-url https://download.pytorch.org/whl/cu121\ntorchvision==0.16.0\n",
        "torchvision==0.16.0+cu121\n",
    ],
)
def test_a_cuda_pin_makes_the_torch_family_an_error(text):
    vision = [f for f in findings("requirements.txt", text) if f.rule == "PRT418"]
    assert [f.severity for f in vision] == ["error"]


def test_cpu_index_is_what_the_vendor_uses_and_no_error():
    text = "pip install torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu --no-deps\n"
    vision = [f for f in findings("install.sh", text) if f.rule == "PRT418"]
    assert [f.severity for f in vision] == ["warning"]


@pytest.mark.parametrize(
    ("words", "start"),
    [
        (["pip", "install", "x"], 2),
        (["/usr/bin/pip3.11", "install", "x"], 2),
        (["python", "-m", "pip", "install", "x"], 4),
        (["uv", "pip", "install", "x"], 3),
        (["pip", "download", "x"], None),
        (["echo", None, "install"], None),
    ],
)
def test_one_pip_install_reader(words, start):
    assert pip_install_start(words) == start


@pytest.mark.parametrize("rel", ["Dockerfile", "install.sh"])
def test_extras_reach_the_same_answer_in_dockerfiles_and_scripts(rel):
    line = 'pip install -e ".[metrics,bitsandbytes]" "accelerate[deepspeed]"\n'
    text = f"FROM python:3.10\nRUN {line}" if rel == "Dockerfile" else f"#!/bin/bash\n{line}"
    extras = sorted(f.subject for f in findings(rel, text) if f.rule == "PRT417")
    assert extras == [".[bitsandbytes]", "accelerate[deepspeed]"]
    # On ROCm deepspeed builds its ops for the GPU: only bitsandbytes (a ROCm build needed) is left.
    assert sorted(f.subject for f in findings(rel, text, "hip") if f.rule == "PRT417") == [".[bitsandbytes]"]


def test_a_carried_pin_names_the_vendor_release():
    [renamed] = [f for f in findings("requirements.txt", "deepspeed==0.16.2\n") if f.rule == "PRT411"]
    assert "==0.16.2 is carried over" in renamed.message and "deepspeed-mlu==0.16.2" in renamed.message
    [unpinned] = [f for f in findings("requirements.txt", "deepspeed\n") if f.rule == "PRT411"]
    assert "carried over" not in unpinned.message
