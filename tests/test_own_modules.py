"""A tree-level fact reaching a Python rule: a package the tree provides itself is not the
library of that name (GPT-NeoX and Megatron-DeepSpeed ship their own `megatron/`; 51 of
GPT-NeoX's imports were reported as megatron-core before). The runner lists the tree's top
once, and the cache key names its own packages, so adding or removing one is never answered
from the cache."""

from __future__ import annotations

from pathlib import Path

from porter.engine.cache import ResultCache, decode_file_check, encode_file_check
from porter.engine.own_modules import own_packages
from porter.engine.runner import check_tree
from porter.rules import ActiveRules, load_rules

TRAIN = """\
import torch
from megatron import mpu
from megatron.model import GPT2Model
import vllm


def model():
    return GPT2Model(mpu.get_model_parallel_world_size()).to(torch.float16)
"""


def _subjects(src: Path, cache: ResultCache | None = None) -> list[str]:
    checked = check_tree(src, ActiveRules(load_rules("mlu")), jobs=1, cache=cache)
    return sorted(f.subject for r in checked for f in r.findings if f.rule == "PRT401")


def _tree(root: Path, own_megatron: bool) -> Path:
    root.mkdir(exist_ok=True)
    (root / "train.py").write_text(TRAIN)
    if own_megatron:
        (root / "megatron" / "model").mkdir(parents=True)
        (root / "megatron" / "__init__.py").write_text("")
        (root / "megatron" / "model" / "__init__.py").write_text("class GPT2Model:\n    pass\n")
    return root


def test_a_package_of_the_tree_is_its_own(tmp_path):
    assert _subjects(_tree(tmp_path / "neox", own_megatron=True)) == ["vllm"]  # vllm is still reported
    assert _subjects(_tree(tmp_path / "user", own_megatron=False)) == ["megatron-core", "vllm"]


def test_what_counts_as_the_trees_own(tmp_path):
    (tmp_path / "megatron").mkdir()
    (tmp_path / "megatron" / "__init__.py").write_text("")
    (tmp_path / "src" / "fla").mkdir(parents=True)  # the src layout
    (tmp_path / "src" / "fla" / "__init__.py").write_text("")
    (tmp_path / "vllm").mkdir()  # no __init__.py: any folder could be a namespace package
    (tmp_path / "tools" / "apex").mkdir(parents=True)  # not at the top: `import apex` is the library
    (tmp_path / "tools" / "apex" / "__init__.py").write_text("")
    (tmp_path / "scripts").mkdir()  # nor a plain folder of scripts
    assert own_packages(tmp_path) == {"megatron", "fla", "tools.apex"}


def test_adding_the_package_is_not_answered_from_the_cache(tmp_path):
    cache = ResultCache(tmp_path / "cache", encode_file_check, decode_file_check)
    src = _tree(tmp_path / "src", own_megatron=False)
    assert "megatron-core" in _subjects(src, cache)
    src = _tree(src, own_megatron=True)
    assert "megatron-core" not in _subjects(src, cache)


def test_a_namespace_folder_of_the_tree_holds_its_own_packages(tmp_path):
    """Megatron-LM's `megatron/` has no `__init__.py`: its `core/` and `training/` are the
    tree's own (850 of its 907 PRT401 findings were its own imports), while another
    distribution of that namespace (megatron.bridge) and a folder of scripts are not."""
    for package in ("core", "training"):
        (tmp_path / "megatron" / package).mkdir(parents=True)
        (tmp_path / "megatron" / package / "__init__.py").write_text("")
    (tmp_path / "megatron" / "notes.py").write_text("")  # a plain module: not counted (cache keys)
    assert own_packages(tmp_path) == {"megatron.core", "megatron.training"}
    (tmp_path / "pretrain_gpt.py").write_text(
        "import torch\nimport megatron\nfrom megatron.core import mpu\nfrom megatron.training import get_args\n"
        "from megatron.bridge import AutoBridge\n"
    )
    assert _subjects(tmp_path) == ["megatron-core"]  # megatron.bridge only
    from porter.python.kinds.library_import import is_own

    own = own_packages(tmp_path)
    assert is_own("megatron", "pretrain_gpt.py", own) and is_own("megatron.core.utils", "x.py", own)
    assert not is_own("megatron.bridge", "x.py", own) and not is_own("vllm", "x.py", own)


def test_the_package_a_file_lies_in_is_its_own(tmp_path):
    """A copy of Megatron-LM vendored below the top (`third_party/Megatron-LM/megatron/core/`)
    imports itself: not the library. A folder named for a library alone (`examples/vllm/`)
    is a folder of examples that use it."""
    copy = tmp_path / "third_party" / "Megatron-LM" / "megatron" / "core"
    copy.mkdir(parents=True)
    (copy / "__init__.py").write_text("import torch\nfrom megatron.core import parallel_state\n")
    (tmp_path / "examples" / "vllm").mkdir(parents=True)
    (tmp_path / "examples" / "vllm" / "serve.py").write_text("import torch\nfrom vllm import LLM\n")
    checked = check_tree(tmp_path, ActiveRules(load_rules("mlu")), jobs=1)
    reported = sorted((r.path, f.subject) for r in checked for f in r.findings if f.rule == "PRT401")
    assert reported == [("examples/vllm/serve.py", "vllm")]
