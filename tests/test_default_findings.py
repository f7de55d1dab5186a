"""The default set holds findings the user must act on (issue 12, noise): a module kept whole
is one finding, and what porter already handled or what never runs on the target is not in
it. Each case is a whole file checked with the default rule set, as `porter check` runs."""

from __future__ import annotations

import json

from porter.engine.pipeline import check_bytes
from porter.rules import ActiveRules, Selection, load_rules

DEFAULT = ActiveRules(load_rules("mlu"))
EVERYTHING = ActiveRules(load_rules("mlu"), Selection(None, ("ALL",)))

TRITON_MODULE = """import bitsandbytes as bnb
import torch
import triton
import triton.language as tl

is_tf32_supported = torch.cuda.get_device_capability(0)[0] >= 8
device = torch.device("cuda")


@triton.jit
def add_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr, tl.load(x_ptr))
"""

ENGINE_ADAPTER = """from typing import TYPE_CHECKING

from .packages import is_vllm_available

if is_vllm_available():
    from vllm import AsyncEngineArgs, AsyncLLMEngine

if TYPE_CHECKING:
    from vllm import SamplingParams


class VllmEngine:
    def __init__(self, path):
        self.engine = AsyncLLMEngine.from_engine_args(AsyncEngineArgs(model=path))
"""

VERSION_REPORT = """import platform


def versions() -> dict:
    info = {"Python": platform.python_version()}
    try:
        import bitsandbytes

        info["bitsandbytes"] = bitsandbytes.__version__
    except Exception:
        pass
    try:
        import vllm

        info["vLLM"] = vllm.__version__
    except ImportError:
        pass
    return info
"""

KEPT_GUARD = """from transformers.utils import is_torch_cuda_available, is_torch_npu_available


def patch(model, args):
    if is_torch_npu_available():
        model.patch_npu()
    elif is_torch_cuda_available() and args.flash_attn == "fa2":
        from flash_attn import flash_attn_varlen_func
        model.patch_gpu(flash_attn_varlen_func)
"""


def _codes(name: str, text: str, rules: ActiveRules = DEFAULT) -> list[tuple[str, int, str]]:
    return [(f.rule, f.line, f.severity) for f in check_bytes(name, text.encode(), rules).findings]


def test_a_kernel_module_is_one_finding():
    assert _codes("kernels/add.py", TRITON_MODULE) == [("PRT602", 3, "warning")]


def test_an_inference_engine_adapter_with_a_guarded_import_is_a_note():
    assert _codes("chat/vllm_engine.py", ENGINE_ADAPTER) == []
    assert _codes("chat/vllm_engine.py", ENGINE_ADAPTER, EVERYTHING) == [("PRT401", 6, "info")]


def test_a_version_report_has_nothing_to_port():
    assert _codes("extras/env.py", VERSION_REPORT) == []
    assert {(c, line) for c, line, _ in _codes("extras/env.py", VERSION_REPORT, EVERYTHING)} == {
        ("PRT401", 7),
        ("PRT401", 13),
    }


def test_a_cuda_check_kept_around_cuda_only_code_is_a_note():
    assert _codes("model/patcher.py", KEPT_GUARD) == []
    noted = _codes("model/patcher.py", KEPT_GUARD, EVERYTHING)
    assert ("PRT309", 7, "info") in noted and all(s == "info" for _, _, s in noted)


def test_a_variable_without_counterpart_is_one_finding_per_file():
    text = (
        "import os\n"
        "env = {'NCCL_IB_DISABLE': os.environ.get('NCCL_IB_DISABLE', '0')}\n"
        "os.environ.pop('NCCL_IB_DISABLE', None)\n"
        "os.environ['CUDA_VISIBLE_DEVICES'] = '0'\n"
        "os.environ['CUDA_VISIBLE_DEVICES'] = '1'\n"
    )
    found = check_bytes("launch.py", text.encode(), DEFAULT).findings
    assert [(f.rule, f.line) for f in found if f.rule == "PRT203"] == [("PRT203", 2)]
    assert "(2 more mentions in this file)" in next(f.message for f in found if f.rule == "PRT203")
    assert sorted((f.rule, f.line) for f in found if f.rule == "PRT202") == [
        ("PRT202", 4),
        ("PRT202", 5),
    ]  # each rename stays


def test_a_flagged_name_is_reported_at_its_uses_not_again_at_its_import():
    """qlora.py imported BitsAndBytesConfig and prepare_model_for_kbit_training and used each:
    four findings for two things to act on. The uses are reported; an import is reported
    only where the file shows no use of it (a re-export)."""
    text = (
        "from peft import prepare_model_for_kbit_training\n"
        "from transformers import BitsAndBytesConfig as Quant, AutoModel\n"
        "model = AutoModel.from_pretrained('m', quantization_config=Quant(load_in_4bit=False))\n"
        "model = prepare_model_for_kbit_training(model)\n"
    )
    found = check_bytes("train.py", text.encode(), DEFAULT).findings
    # Both uses are one decision (porter/python/decisions.py): one finding naming the other line.
    assert [(f.rule, f.line) for f in found if f.rule == "PRT402"] == [("PRT402", 3)]
    assert "also written at line 4 (PRT402)" in next(f.message for f in found if f.rule == "PRT402")
    reexport = b"from transformers import BitsAndBytesConfig\n__all__ = ['BitsAndBytesConfig']\n"
    assert [(f.rule, f.line) for f in check_bytes("__init__.py", reexport, DEFAULT).findings] == [("PRT402", 1)]
    # Named only in annotations (TRL's trainers): nothing runs, one note at the import.
    typed = (
        b"from transformers import BitsAndBytesConfig\n"
        b"def f(q: 'BitsAndBytesConfig | None' = None) -> BitsAndBytesConfig | None:\n    return q\n"
    )
    everything = [(f.rule, f.line, f.severity) for f in check_bytes("trainer.py", typed, EVERYTHING).findings]
    assert everything == [("PRT402", 1, "info")]


def test_a_shell_variable_without_counterpart_is_one_finding_per_file():
    """ChatGLM3's notebook sets NCCL_P2P_DISABLE and NCCL_IB_DISABLE on two `!` lines: one
    finding per variable and file (with the count), as the Python side does; the rename of
    CUDA_VISIBLE_DEVICES stays an edit on each line."""
    script = (
        b"#!/bin/bash\n"
        b"CUDA_VISIBLE_DEVICES=0 NCCL_P2P_DISABLE=1 NCCL_IB_DISABLE=1 python train.py\n"
        b"CUDA_VISIBLE_DEVICES=0 NCCL_P2P_DISABLE=1 NCCL_IB_DISABLE=1 python eval.py\n"
    )
    found = check_bytes("run.sh", script, DEFAULT).findings
    (reported,) = [f for f in found if f.rule == "PRT502"]  # the variables are one thing to drop
    assert reported.line == 2 and reported.subject == "NCCL_P2P_DISABLE"
    assert "(1 more mention in this file)" in reported.message  # its repeat on line 3, counted
    assert reported.message.endswith(
        "Also in this file: NCCL_IB_DISABLE (line 2)."
    )  # the other name, at its first line
    assert sorted(f.line for f in found if f.rule == "PRT501") == [2, 3]
    cells = [
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": None,
            "outputs": [],
            "source": ["!NCCL_P2P_DISABLE=1 python train.py\n"],
        }
        for _ in range(2)
    ]
    notebook = json.dumps(
        {
            "cells": cells,
            "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    ).encode()
    assert len([f for f in check_bytes("nb.ipynb", notebook, DEFAULT).findings if f.rule == "PRT502"]) == 1


def test_a_distribution_repeated_in_extras_is_one_finding_per_file():
    """unsloth's pyproject lists xformers in one extra per CUDA build (151 findings for one
    package): one finding per distribution and file, with the count; flash-attn stays its own."""
    data = (
        b'[project]\nname = "x"\ndependencies = ["torch"]\n[project.optional-dependencies]\n'
        b'cu118 = ["xformers==0.0.22", "flash-attn"]\ncu121 = ["xformers==0.0.23"]\ncu124 = ["xformers==0.0.28"]\n'
    )
    found = [f for f in check_bytes("pyproject.toml", data, DEFAULT).findings if f.rule == "PRT412"]
    assert sorted(f.subject for f in found) == ["flash-attn", "xformers"]
    assert next(f for f in found if f.subject == "xformers").message.endswith("(2 more mentions in this file)")


def test_nccl_for_another_stack_is_reported_once_per_line_and_not_rewritten():
    text = "def sync(args):\n    if getattr(args.vllm, 'sync_backend', 'nccl') == 'nccl':\n        pass\n"
    found = check_bytes("actor.py", text.encode(), DEFAULT).findings
    assert [(f.rule, f.line, f.severity) for f in found] == [("PRT201", 2, "warning")]
    assert "kept" in found[0].message


def test_a_folder_of_kept_kernel_modules_is_one_finding(tmp_path):
    """Kernel modules vendored together (a third_party/triton/ folder) are one decision: one
    finding naming the others, in check and in convert's report; a module in another folder
    keeps its own, and the files' other findings are untouched (with their baseline hashes)."""
    from porter.checker.run import run_check
    from porter.converter.run import run_convert
    from porter.run_options import RunOptions

    src = tmp_path / "src"
    (src / "third_party" / "triton").mkdir(parents=True)
    (src / "ops").mkdir()
    for name in ("chunk.py", "cumsum.py", "solve.py"):
        (src / "third_party" / "triton" / name).write_text(TRITON_MODULE)
    (src / "ops" / "gemm.py").write_text(TRITON_MODULE)
    (src / "train.py").write_text("import torch\nx = torch.zeros(1).cuda()\n")

    def kept(findings) -> list:
        return [f for f in findings if f.subject and f.subject.startswith("module:")]

    checked = run_check([src], RunOptions("mlu", jobs=1))
    folded = {r.path: kept(r.findings) for r in checked.files if kept(r.findings)}
    assert set(folded) == {"ops/gemm.py", "third_party/triton/chunk.py"}
    (first,) = folded["third_party/triton/chunk.py"]
    assert "2 other modules of third_party/triton" in first.message and "cumsum.py, solve.py" in first.message
    assert all(len(r.findings) == len(r.line_hashes) for r in checked.files)
    done = run_convert(src, RunOptions(target="mlu", out=tmp_path / "out", jobs=1))
    report = done.report
    reported = [f for f in report["findings"] if "module kept as it is" in f["message"]]
    assert sorted(f["path"] for f in reported) == ["ops/gemm.py", "third_party/triton/chunk.py"]


def test_the_same_report_in_every_script_of_a_folder_is_one_finding(tmp_path):
    """28 launch scripts of one folder each export CUBLAS_WORKSPACE_CONFIG (microsoft/LoRA's
    GLUE scripts): one decision, one finding naming the other scripts (PRT502 once_per_folder).
    A script of another folder, and one whose report differs, keep their own."""
    from porter.checker.run import run_check
    from porter.run_options import RunOptions

    src = tmp_path / "src"
    (src / "glue").mkdir(parents=True)
    (src / "e2e").mkdir()
    for task in ("cola", "mnli", "sst2"):
        (src / "glue" / f"{task}.sh").write_text(f"export CUBLAS_WORKSPACE_CONFIG=:16:8\npython run.py --task {task}\n")
    (src / "glue" / "tuned.sh").write_text("export NCCL_P2P_DISABLE=1\npython run.py\n")
    (src / "e2e" / "train.sh").write_text("export CUBLAS_WORKSPACE_CONFIG=:16:8\npython train.py\n")

    reports = {
        r.path: [f.message for f in r.findings if f.rule == "PRT502"]
        for r in run_check([src], RunOptions("mlu", jobs=1)).files
    }
    reports = {path: messages for path, messages in reports.items() if messages}
    assert set(reports) == {"glue/cola.sh", "glue/tuned.sh", "e2e/train.sh"}
    (first,) = reports["glue/cola.sh"]
    assert "the same in 2 other files of glue: mnli.sh, sst2.sh" in first
    assert "other files" not in reports["e2e/train.sh"][0] and "other files" not in reports["glue/tuned.sh"][0]


def test_a_folded_report_keeps_each_line_of_the_first_script_and_names_each_other_script_once(tmp_path):
    """nvidia-smi in 30 launch scripts of a few folders (Megatron-DeepSpeed's examples): per
    folder one finding naming the other scripts (PRT503 once_per_folder); the first script
    keeps each of its own lines (two calls are two places), another script with two calls is
    named once."""
    from porter.checker.run import run_check
    from porter.run_options import RunOptions

    src = tmp_path / "src" / "examples"
    src.mkdir(parents=True)
    probe = "GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)\n"
    (src / "a.sh").write_text(probe + "nvidia-smi\n")
    (src / "b.sh").write_text(probe + "nvidia-smi\n")
    (src / "c.sh").write_text(probe)
    (tmp_path / "src" / "tools").mkdir()
    for name in ("d.sh", "e.sh"):
        (tmp_path / "src" / "tools" / name).write_text(probe)
    found = {
        r.path: [(f.line, f.message) for f in r.findings if f.rule == "PRT503"]
        for r in run_check([tmp_path / "src"], RunOptions("mlu", jobs=1)).files
    }
    assert [line for line, _ in found["examples/a.sh"]] == [1, 2]
    assert found["examples/a.sh"][0][1].endswith("(the same in 2 other files of examples: b.sh, c.sh)")
    assert found["examples/b.sh"] == found["examples/c.sh"] == found["tools/e.sh"] == []
    assert found["tools/d.sh"][0][1].endswith("(the same in 1 other file of tools: e.sh)")


def test_an_info_rule_nobody_would_see_does_not_run():
    """bf16 in a training config is a note (PRT515, info, nothing to edit): by default the run
    does not apply the rule, so the config is not even parsed for it; named, it runs."""
    config = b"model_name_or_path: my-model\nstage: sft\nbf16: true\n"
    assert "PRT515" not in DEFAULT.codes and "PRT515" in EVERYTHING.codes
    named = ActiveRules(load_rules("mlu"), Selection(None, (), extend=("PRT515",)))
    assert "PRT515" in named.codes
    assert check_bytes("train.yaml", config, DEFAULT).findings == ()
    assert [f.rule for f in check_bytes("train.yaml", config, named).findings] == ["PRT515"]
    # An info rule of a kind whose findings may be raised to a warning still runs (PRT107's
    # import is an edit; the string-literal kind warns for some strings).
    assert "PRT107" in DEFAULT.codes


def test_environment_advice_in_many_folders_is_one_finding_for_the_tree(tmp_path):
    """torchvision in the requirements of every example folder (diffusers: 55 of them): where
    to install it from is one decision for the environment (PRT418 once_per_tree), said once,
    naming the first five other files and counting the rest; a line that pins a CUDA build is
    an error, a line to change where it is: each keeps its own finding."""
    from porter.checker.run import run_check
    from porter.run_options import RunOptions

    src = tmp_path / "src"
    for name in ("a", "b", "c", "d", "e", "f", "g"):
        (src / "examples" / name).mkdir(parents=True)
        (src / "examples" / name / "requirements.txt").write_text("accelerate\ntorchvision\n")
    (src / "requirements.txt").write_text("torchvision==0.16.0+cu121\n")
    (src / "docker").mkdir()
    (src / "docker" / "requirements.txt").write_text("torchvision==0.16.0+cu121\n")
    found = [
        (r.path, f.severity, f.message)
        for r in run_check([src], RunOptions("mlu", jobs=1)).files
        for f in r.findings
        if f.rule == "PRT418"
    ]
    assert [(path, severity) for path, severity, _ in found] == [
        ("docker/requirements.txt", "error"),
        ("examples/a/requirements.txt", "warning"),
        ("requirements.txt", "error"),
    ]
    assert found[1][2].endswith(
        "(also in 6 other files of the tree: examples/b/requirements.txt, "
        "examples/c/requirements.txt, examples/d/requirements.txt, "
        "examples/e/requirements.txt, examples/f/requirements.txt and 1 more)"
    )


def test_a_folded_message_names_one_other_file_or_module_in_the_singular():
    from porter.core.model import KEPT_MODULE
    from porter.engine.folding import _folded_message

    assert (
        _folded_message("m", KEPT_MODULE, ["ops/b.py"], "ops")
        == "m (and so is the 1 other module of ops that imports it: b.py)"
    )
    assert _folded_message("m", KEPT_MODULE, ["ops/b.py", "ops/c.py"], "ops").endswith(
        "are the 2 other modules of ops that import it: b.py, c.py)"
    )
    assert _folded_message("m", "folder", ["glue/b.sh"], "glue") == "m (the same in 1 other file of glue: b.sh)"
    assert _folded_message("m", "tree", ["x/r.txt"], None) == "m (also in 1 other file of the tree: x/r.txt)"


def test_a_device_string_given_to_lightning_is_left_to_the_lightning_finding():
    """`L.Fabric(accelerator="cuda")`: Lightning without an MLU accelerator (PRT419) is the
    one thing to act on; the kept "cuda" in it is not reported a second time (PRT106's
    covered_by). The literal stays as it is; a "cuda" given to torch is still rewritten."""
    source = (
        "import lightning as L\nimport torch\n\n"
        'fabric = L.Fabric(accelerator="cuda", devices=2)\n'
        'x = torch.zeros(2, device="cuda")\n'
    )
    found = _codes("train.py", source)
    assert [(code, line) for code, line, _ in found if code in ("PRT106", "PRT419")] == [("PRT419", 4), ("PRT106", 5)]
    from porter.engine.pipeline import convert_file

    ported = convert_file("train.py", source.encode(), "python", DEFAULT).new_bytes.decode()
    assert 'L.Fabric(accelerator="cuda", devices=2)' in ported and 'device="mlu"' in ported


def test_a_framework_without_an_mlu_accelerator_is_one_finding_for_the_tree(tmp_path):
    """NeMo builds a Lightning Trainer in 154 example scripts: registering an MLU accelerator is
    one decision (PRT419 once_per_tree), one finding naming the other files, whatever each
    file's own report says (a Trainer here, a Fabric and a Trainer there)."""
    from porter.checker.run import run_check
    from porter.run_options import RunOptions

    src = tmp_path / "src"
    (src / "asr").mkdir(parents=True)
    (src / "nlp").mkdir()
    (src / "asr" / "train.py").write_text("import pytorch_lightning as pl\n\ntrainer = pl.Trainer(devices=1)\n")
    (src / "nlp" / "tune.py").write_text("import lightning as L\n\nfabric = L.Fabric()\ntrainer = L.Trainer()\n")
    found = [
        (r.path, f.line, f.message)
        for r in run_check([src], RunOptions("mlu", jobs=1)).files
        for f in r.findings
        if f.rule == "PRT419"
    ]
    assert [(path, line) for path, line, _ in found] == [("asr/train.py", 3)]
    assert found[0][2].endswith("(also in 1 other file of the tree: nlp/tune.py)")


def test_a_kept_module_says_why_in_its_own_words():
    """Kept modules have their own code (PRT602, not the availability guard's PRT309), and a
    module whose Triton import is guarded is not said to import it at its top: it defines
    Triton kernels (Megatron-LM's MoE activations)."""
    guarded = (
        "import torch\ntry:\n    import triton\nexcept ImportError:\n    triton = None\n\n\n"
        "@triton.jit\ndef kernel(x):\n    pass\n\n\ndef run(x):\n    return x.cuda()\n"
    )
    (found,) = check_bytes("moe/activations.py", guarded.encode(), DEFAULT).findings
    assert (found.rule, found.line) == ("PRT602", 8)
    assert "defines triton kernels (@triton.jit)" in found.message and "at top level" not in found.message
    extension = "import torch\nimport mlp_cuda\n\n\ndef test_mlp():\n    x = torch.ones(2).cuda()\n"
    (found,) = check_bytes("tests/test_mlp.py", extension.encode(), DEFAULT).findings
    assert (found.rule, found.line, found.subject) == ("PRT602", 2, "module:mlp_cuda")
