"""Noise found on real repositories: one decision, one finding, across the whole tree."""

from __future__ import annotations

from porter.checker.run import run_check
from porter.run_options import RunOptions


def _found(src, code):
    return [
        (r.path, f.severity, f.message)
        for r in run_check([src], RunOptions("mlu", jobs=1)).files
        for f in r.findings
        if f.rule == code
    ]


def test_a_library_needing_a_vendor_build_is_one_finding_per_library_for_the_tree(tmp_path):
    """ms-swift imports megatron.core in 20 modules of several folders and vllm in 8: each library
    is one decision (PRT401 once_per_subject_in_tree), reported at its first file, naming the
    others, whatever each file's message says (which module, how many imports). An import of a
    library that does not run at all (bitsandbytes, an error) stays in every file."""
    src = tmp_path / "src"
    for folder in ("pkg/trainers", "pkg/utils", "pkg/loss"):
        (src / folder).mkdir(parents=True)
    (src / "pkg/trainers/base.py").write_text(
        "from megatron.core import mpu\nfrom megatron.core import tensor_parallel\n"
    )
    (src / "pkg/utils/convert.py").write_text("import megatron.core.pipeline_parallel\nimport vllm\n")
    (src / "pkg/loss/emb.py").write_text("from megatron.core import mpu\n")
    (src / "pkg/loss/engine.py").write_text("from vllm import LLM\n")
    (src / "pkg/utils/quant.py").write_text("import bitsandbytes as bnb\n")
    (src / "pkg/trainers/quant.py").write_text("import bitsandbytes as bnb\n")
    found = _found(src, "PRT401")
    assert [(path, severity) for path, severity, _ in found] == [
        ("pkg/loss/emb.py", "warning"),
        ("pkg/loss/engine.py", "warning"),
        ("pkg/trainers/quant.py", "error"),
        ("pkg/utils/quant.py", "error"),
    ]
    assert found[0][2].endswith("(also in 2 other files of the tree: pkg/trainers/base.py, pkg/utils/convert.py)")
    assert found[1][2].endswith("(also in 1 other file of the tree: pkg/utils/convert.py)")
    assert "other file" not in found[2][2] and "other file" not in found[3][2]


def test_a_config_key_asking_for_a_missing_feature_in_every_preset_is_one_error_naming_them_all(tmp_path):
    """LitGPT's config_hub: 16 qlora.yaml presets, each `quantize: bnb.nf4`. QLoRA is one decision
    (PRT525 once_per_subject_in_tree = "errors-too"): one error that names every other preset,
    not the first five; a preset without it is not named."""
    src = tmp_path / "src"
    models = ("a", "b", "c", "d", "e", "f", "g")
    for model in models:
        (src / "config_hub" / model).mkdir(parents=True)
        (src / "config_hub" / model / "qlora.yaml").write_text("lora_r: 8\nquantize: bnb.nf4\n")
        (src / "config_hub" / model / "lora.yaml").write_text("lora_r: 8\n")
    found = _found(src, "PRT525")
    assert [(path, severity) for path, severity, _ in found] == [("config_hub/a/qlora.yaml", "error")]
    others = ", ".join(f"config_hub/{m}/qlora.yaml" for m in models[1:])
    assert found[0][2].endswith(f"(also in 6 other files of the tree: {others})")


def test_a_config_key_in_one_file_keeps_its_plain_message(tmp_path):
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    (src / "a" / "qlora.yaml").write_text("lora_r: 8\nquantize: bnb.nf4\n")
    assert [m for _, _, m in _found(src, "PRT525")] == [
        "quantize: bnb.nf4: LitGPT's bnb.* quantization (QLoRA) needs bitsandbytes, which does not run on MLU"
    ]
