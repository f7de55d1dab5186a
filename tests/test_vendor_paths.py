"""Files for other accelerators are copied unchanged, with one PRT190 info finding each.

(The rule fixture harness runs one handler on one file; this rule works on paths in a
tree, so it is tested here.)
"""

from __future__ import annotations

from porter.converter.run import run_convert
from porter.config import Settings
from porter.run_options import RunOptions

CONFIG = "model_name_or_path: /models/qwen\nflash_attn: fa2\n"
CUDA_PY = "import torch\n\n\ndef go(x):\n    return x.cuda()\n"


def _tree(tmp_path):
    src = tmp_path / "repo"
    for rel, text in {
        "examples/ascend/sft.yaml": CONFIG,
        "examples/train/sft.yaml": CONFIG,
        "requirements/npu.txt": "torch-npu==2.5.1\nbitsandbytes>=0.39\n",
        "requirements/base.txt": "bitsandbytes>=0.39\n",
        "pkg/npu_helper.py": CUDA_PY,
        "pkg/input_utils.py": CUDA_PY,  # "npu" inside a word is not a vendor mark
    }.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    return src


def test_vendor_files_are_kept_and_reported(tmp_path):
    src = _tree(tmp_path)
    done = run_convert(
        src, RunOptions(target="mlu", out=tmp_path / "out", jobs=1, settings=Settings(extend_select=("PRT190",)))
    )
    report, out = done.report, done.out
    status = {f["path"]: f["status"] for f in report["files"]}
    kept = {f["path"] for f in report["findings"] if f["rule"] == "PRT190"}
    assert kept == {"examples/ascend/sft.yaml", "requirements/npu.txt", "pkg/npu_helper.py"}
    for rel in kept:
        assert status[rel] == "unchanged" and (out / rel).read_bytes() == (src / rel).read_bytes()
    assert status["examples/train/sft.yaml"] == "changed"
    assert status["requirements/base.txt"] == "changed"
    assert "x.mlu()" in (out / "pkg/input_utils.py").read_text()


def test_hip_keeps_rocm_files_too(tmp_path):
    src = tmp_path / "repo"
    (src / "docker" / "docker-rocm").mkdir(parents=True)
    (src / "docker" / "docker-rocm" / "Dockerfile").write_text("FROM rocm/pytorch:latest\nRUN pip install flash-attn\n")
    done = run_convert(
        src, RunOptions(target="hip", out=tmp_path / "out", jobs=1, settings=Settings(extend_select=("PRT190",)))
    )
    report = done.report
    assert [f["rule"] for f in report["findings"]] == ["PRT190"]
    # A note, not a task: by default the file is kept just the same, without the finding.
    done = run_convert(src, RunOptions(target="hip", out=tmp_path / "out2", jobs=1))
    report, out = done.report, done.out
    assert report["findings"] == []
    assert (out / "docker/docker-rocm/Dockerfile").read_bytes() == (src / "docker/docker-rocm/Dockerfile").read_bytes()


def test_other_stacks_by_path_word():
    """Folders and files named for another stack (Intel IPEX and ITREX, OpenVINO, TensorRT-LLM) are kept;
    the word must stand alone in the path (a `tensorrt` inside another word does not count)."""
    from porter.engine.vendor_paths import vendor_word
    from porter.rules import load_rules

    rules = load_rules("mlu").of_kind("vendor-path")
    for rel in (
        "examples/ipex/chat.py",
        "deploy/tensorrt/build.sh",
        "trtllm_runner/run.py",
        "openvino_export.py",
        # GLM-4's Intel Extension for Transformers demo: its load_in_4bit is Intel's, not bitsandbytes'
        "demo/intel_device_demo/itrex/itrex_cli_demo.py",
    ):
        assert vendor_word(rel, rules) is not None, rel
    assert vendor_word("src/extensorrtion/util.py", rules) is None


def test_the_targets_own_folders_are_not_another_vendor(tmp_path):
    """On HIP, docker/docker-rocm is already ROCm's: kept, and said so (not 'another vendor')."""
    src = tmp_path / "repo"
    (src / "docker" / "docker-rocm").mkdir(parents=True)
    (src / "docker" / "docker-rocm" / "Dockerfile").write_text("FROM rocm/pytorch:latest\n")
    (src / "docker" / "docker-npu").mkdir(parents=True)
    (src / "docker" / "docker-npu" / "Dockerfile").write_text("FROM ascendai/cann:latest\n")
    done = run_convert(
        src, RunOptions(target="hip", out=tmp_path / "out", jobs=1, settings=Settings(extend_select=("PRT190",)))
    )
    report = done.report
    messages = {f["path"]: f["message"] for f in report["findings"]}
    assert "already for this target" in messages["docker/docker-rocm/Dockerfile"]
    assert "another device or vendor" in messages["docker/docker-npu/Dockerfile"]


def test_the_cuda_twin_of_the_targets_own_files_is_kept_for_cuda(tmp_path):
    """docker/docker-cuda beside docker/docker-npu (LLaMA-Factory) is the setup for CUDA
    machines: for npu it is kept, not ported into a second NPU setup; requirements/cuda.txt
    beside requirements/npu.txt likewise. Without a twin, a CUDA file is ported as ever."""
    src = tmp_path / "repo"
    files = {
        "docker/docker-cuda/Dockerfile": "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n",
        "docker/docker-npu/Dockerfile": "FROM ascendai/cann:8.0\n",
        "requirements/cuda.txt": "bitsandbytes>=0.39\n",
        "requirements/npu.txt": "torch-npu==2.8.0\n",
        "requirements/cuda_extra.txt": "bitsandbytes>=0.39\n",
    }
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    done = run_convert(
        src, RunOptions(target="npu", out=tmp_path / "out", jobs=1, settings=Settings(extend_select=("PRT190",)))
    )
    by_path: dict[str, list[str]] = {}
    for f in done.report["findings"]:
        by_path.setdefault(f["path"], []).append(f"{f['rule']} {f['message']}")
    assert by_path["docker/docker-cuda/Dockerfile"] == [
        "PRT190 kept as it is: the CUDA counterpart of docker/docker-npu, which the tree already has for this target"
    ]
    assert by_path["requirements/cuda.txt"] == [
        "PRT190 kept as it is: the CUDA counterpart of requirements/npu.txt, which the tree already has for this target"
    ]
    assert by_path["requirements/cuda_extra.txt"] and not any(
        m.startswith("PRT190") for m in by_path["requirements/cuda_extra.txt"]
    )  # no npu twin: ported
