"""The op scan: which torch APIs a file uses and what the target's table says about them.

The op-table rules' fixture cases live with every rule's, under fixtures/rules/<target>/PRT90x/
(tests/test_rule_fixtures.py); small inline cases here pin the receiver reading and the message.
"""

from __future__ import annotations

import ast

import pytest

from porter.engine.pipeline import check_bytes
from porter.tables.optables import load_api_table
from porter.python.opscan import api_uses
from porter.python.context import FileContext
from porter.rules import ActiveRules, Selection, load_rules

VERSIONS = {"mlu": "2.4", "hip": None, "npu": "2.8"}  # pinned, so a newer table does not move the cases


def _findings(target: str, rel: str, source: str, select: tuple[str, ...] = ()):
    result = check_bytes(rel, source.encode(), ActiveRules(load_rules(target), Selection(VERSIONS[target], select)))
    assert result.error is None and result.skipped is None, result.error or result.skipped
    return result.findings


def _uses(source: str, target: str = "mlu"):
    tree = ast.parse(source)
    ctx = FileContext.build("t.py", source, tree, target)
    return api_uses(ctx, load_api_table(target, VERSIONS[target]))


@pytest.mark.parametrize(
    "source,expected",
    [
        pytest.param("import torch\ntorch.nn.Linear(2, 2)\n", {("torch.nn.Linear", "api")}, id="fix/construction"),
        pytest.param(
            "from torch import nn\nclass M(nn.Module):\n    pass\n", {("torch.nn.Module", "api")}, id="fix/base-class"
        ),
        pytest.param(
            "import torch\n@torch.no_grad()\ndef f():\n    pass\n", {("torch.no_grad", "api")}, id="fix/decorator"
        ),
        pytest.param(
            "import torch as th\nth.backends.cudnn.deterministic = True\n",
            {("torch.backends.cudnn.deterministic", "api")},
            id="fix/attribute-write",
        ),
        pytest.param("def f(torch):\n    torch.compile(x)\n", set(), id="noop/not-imported"),
        pytest.param("import torch\nx: torch.Tensor = None\n", set(), id="noop/annotation"),
        pytest.param("import torch\ntorch.float32\n", set(), id="noop/dtype"),
        pytest.param("import torch\nF = torch.nn.functional\n", set(), id="noop/module"),
        pytest.param(
            "import torch\nif hasattr(torch, 'npu'):\n    torch.npu.synchronize(torch.npu)\n",
            set(),
            id="noop/other-accelerator",
        ),
    ],
)
def test_api_uses(source, expected):
    assert {(u.entry.api, u.use) for u in _uses(source) if u.use == "api"} == expected


@pytest.mark.parametrize(
    "source,use",
    [
        pytest.param("import torch\nx = torch.ones(2)\nx.logit()\n", "method", id="fix/factory"),
        pytest.param("import torch\ndef f(x: torch.Tensor):\n    x.logit()\n", "method", id="fix/annotated-arg"),
        pytest.param(
            "import torch\ndef f(x: 'Optional[torch.Tensor]'):\n    x.logit()\n", None, id="noop/optional-unimported"
        ),
        pytest.param(
            "from typing import Optional\nimport torch\ndef f(x: Optional[torch.Tensor]):\n    x.logit()\n",
            "method",
            id="fix/optional",
        ),
        pytest.param("import torch\nx = torch.ones(2)\n(x * 2)[0].logit()\n", "method", id="fix/expression"),
        pytest.param("import torch\nx = torch.ones(2).tolist()\nx.logit()\n", None, id="noop/not-a-tensor-result"),
        pytest.param(
            "import torch\ndef f(x, y):\n    x = y\n    x = torch.ones(2)\n    x.logit()\n",
            "likely-method",
            id="fix/some-paths",
        ),
        pytest.param("import torch\nx = torch.ones(2)\ndef f():\n    x.logit()\n", "method", id="fix/global"),
        pytest.param("import torch\nx = torch.ones(2)\ndef f(x):\n    x.logit()\n", None, id="noop/shadowed"),
        pytest.param("import torch\nx = x.logit()\nx.logit()\n", None, id="noop/self-reference"),
    ],
)
def test_tensor_receivers(source, use):
    found = [u.use for u in _uses(source) if u.entry.api == "torch.Tensor.logit"]
    assert found[-1:] == ([use] if use else [])


def test_message_names_api_table_version_and_note():
    (finding,) = [
        f
        for f in _findings("mlu", "a.py", "import torch.nn.functional as F\nF.pad(x, (1, 1), mode='reflect')\n")
        if f.rule == "PRT902"
    ]
    assert finding.subject == "torch.nn.functional.pad"
    assert "partial in the mlu table for torch 2.4" in finding.message
    assert "reflect" in finding.message  # the table's note
    assert (finding.line, finding.col, finding.end_col) == (2, 1, 6)


def test_counterpart_is_the_suggestion():
    (finding,) = [
        f
        for f in _findings("mlu", "a.py", "import torch\nx = torch.ones(2)\nx.cuda()\n", ("PRT9",))
        if f.rule == "PRT902"
    ]
    assert finding.suggestion == "Use torch.Tensor.mlu."
    assert (finding.line, finding.col) == (3, 3)  # points at the method name


def test_likely_partial_is_info():
    source = "import torch\ndef f(y, fresh):\n    if fresh:\n        y = torch.ones(4)\n    return y.norm(p='nuc')\n"
    assert not [f for f in _findings("mlu", "a.py", source) if f.rule == "PRT904"]  # a note: not by default
    (finding,) = [f for f in _findings("mlu", "a.py", source, ("PRT9",)) if f.rule == "PRT904"]
    assert finding.severity == "info" and "probably a tensor" in finding.message


def test_hip_unknowns_only_when_selected():
    source = "import torch\nwith torch.inference_mode():\n    pass\n"
    assert not [f for f in _findings("hip", "a.py", source) if f.rule == "PRT903"]
    (finding,) = _findings("hip", "a.py", source, select=("PRT903",))
    assert finding.rule == "PRT903" and "the hip table (any torch version)" in finding.message


@pytest.mark.parametrize(
    "api",
    [
        "torch.einsum('ii', x)",
        "torch.numel(x)",
        "torch.use_deterministic_algorithms(True)",
        # seen as errors in nanoGPT and FastChat before they were listed
        "torch.nn.ModuleDict({})",
        "torch.set_printoptions(precision=2)",
        "torch.set_num_threads(1)",
        "torch.nn.utils.parameters_to_vector([x])",
        "torch.nn.utils.prune.l1_unstructured(m, 'weight', 0.2)",
        # seen in axolotl: a shape, and a composite op of ATen
        "torch.Size([2, 2])",
        "torch.nn.functional.cosine_similarity(x, x)",
        # seen in xtuner: graph tracing, op registration, a composite norm
        "torch.fx.symbolic_trace(m)",
        "torch.library.custom_op('lib::f', mutates_args=())",
        "torch.nn.functional.rms_norm(x, [2])",
        # seen in InternVL and transformers' model code: TorchScript's eager no-ops
        "torch.jit.is_tracing()",
        "torch.jit.ignore(lambda: 0)",
        # seen in open_clip: an assert FX can trace
        "torch._assert(x.numel() == 4, 'four')",
        # seen in OLMo, GPT-NeoX, ms-swift: composite ops, a cache reset
        "torch.tensordot(x, x, dims=1)",
        "torch.movedim(x, 0, 1)",
        "torch.fliplr(x)",
        "torch.nanquantile(x, 0.5)",
        "torch.compiler.reset()",
        # seen in sd-scripts: ConstantPad2d with the value 0, the same forward
        "torch.nn.ZeroPad2d((0, 1, 0, 1))",
        # seen in nanotron: hardtanh(0, 6), and a wrapper of assert_close
        "torch.nn.ReLU6()",
        "torch.nn.functional.relu6(x)",
        "torch.testing.assert_allclose(x, x)",
        # seen in dinov2: an exporter flag, a composite distance
        "torch.onnx.is_in_onnx_export()",
        "torch.nn.PairwiseDistance(2, eps=1e-8)",
        # seen in microsoft/LoRA: a module over a supported functional form
        "torch.nn.KLDivLoss(reduction='batchmean')",
        # seen in LAVIS: a composite norm over batch_norm
        "torch.nn.InstanceNorm2d(4)",
        # seen in distil-whisper: a window written once with basic ops
        "torch.hann_window(400)",
        # seen in fairseq: Python made of supported ops
        "torch.nn.functional.gumbel_softmax(x, tau=1.0, hard=True)",
        "torch.distributions.uniform.Uniform(0.0, 1.0)",
        # seen in diffusers and RWKV: aliases of supported ops
        "torch.tile(x, (2, 1))",
        "torch.swapaxes(x, 0, 1)",
        "torch.deg2rad(x)",
        # seen in NeMo: hann_window's siblings
        "torch.hamming_window(400)",
        "torch.blackman_window(400)",
        "torch.bartlett_window(400)",
    ],
)
def test_host_side_and_composite_ops_are_never_errors(api):
    """The vendor list marks them unsupported, but they are host code or composite ops: a
    note (info, outside the default set), never an error that fails a build."""
    source = f"import torch\nx = torch.ones(2, 2)\n{api}\n"
    assert not [f for f in _findings("mlu", "a.py", source) if f.rule == "PRT901"]
    (finding,) = [f for f in _findings("mlu", "a.py", source, ("PRT9",)) if f.rule == "PRT901"]
    assert finding.severity == "info"


@pytest.mark.parametrize(
    "call, host",
    [
        ("x.type(torch.float32)", True),
        ("x.type(x.dtype)", True),
        ("x.type(dtype=torch.long)", True),
        ("x.type(torch.FloatTensor)", True),
        ("torch.set_default_tensor_type(torch.FloatTensor)", True),
        # the vendor's `false` stands for the other forms: a type name, a CUDA tensor type
        ("x.type()", False),
        ("x.type('torch.cuda.FloatTensor')", False),
        ("x.type(torch.cuda.HalfTensor)", False),
        ("torch.set_default_tensor_type(torch.cuda.HalfTensor)", False),
        ("torch.set_default_tensor_type(kind)", False),
    ],
)
def test_an_unsupported_api_in_a_host_form_is_a_note_with_what_that_form_does(call, host):
    """Tensor.type given a dtype is a cast (the op behind Tensor.to), given a CPU type a copy to
    the CPU; set_default_tensor_type given a CPU type is host code: notes (seen in 21
    repositories); the forms the vendor's `false` is about stay errors, with the vendor's word."""
    source = f"import torch\nx = torch.ones(2, 2)\nkind = 'torch.FloatTensor'\n{call}\n"
    (finding,) = [f for f in _findings("mlu", "a.py", source, ("PRT9",)) if f.rule == "PRT901"]
    assert finding.severity == ("info" if host else "error")
    assert ("CPU" in finding.message) == host


def test_a_class_in_a_type_test_is_not_a_use():
    """`isinstance(m, nn.DataParallel)` only compares with the class (peft dispatches LoRA
    layers on nn.MultiheadAttention that way): nothing runs on the device, so no finding; a
    construction of it in the same file still is one."""
    source = (
        "import torch\nfrom torch import nn\n\n\ndef wrap(model):\n"
        "    if isinstance(model, (nn.DataParallel, nn.parallel.DistributedDataParallel)):\n"
        "        return model\n"
        "    if issubclass(type(model), torch.nn.DataParallel):\n"
        "        return model\n"
        "    return nn.DataParallel(model)\n"
    )
    found = [(f.rule, f.line) for f in _findings("mlu", "a.py", source) if f.rule == "PRT901"]
    assert found == [("PRT901", 10)]


def test_a_file_that_does_not_import_torch_is_not_parsed_for_the_scan(monkeypatch):
    """The op scan names only what resolves to torch through the file's imports: a file that
    names torch only in strings is not parsed for it; every spelling of an import is seen."""
    import porter.python.analyze as analyze
    from porter.rules import ActiveRules, Selection, load_rules

    ops_only = ActiveRules(load_rules("mlu"), Selection(None, ("PRT9",)))
    parsed: list[str] = []
    real = analyze.parse
    monkeypatch.setattr(analyze, "parse", lambda text, path: parsed.append(path) or real(text, path))
    assert analyze.find_python("a.py", b'parser.add_argument("--torch_dtype", help="torch dtype")\n', ops_only) is None
    for i, source in enumerate(
        [
            "import torch\n",
            "import os, torch.nn as nn\n",
            "from torch import nn\n",
            "def f():\n    from torch.nn import functional as F\n",
            "import numpy as np,torch\n",
            "import os; import torch\n",
            "from \\\n    torch import nn\n",
        ]
    ):
        analyze.find_python(f"m{i}.py", source.encode(), ops_only)
        assert parsed[-1:] == [f"m{i}.py"], source
