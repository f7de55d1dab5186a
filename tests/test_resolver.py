"""porter's import resolver: every import form of PATTERNS.md."""

from __future__ import annotations

import ast

import pytest

from porter.python.resolve import ImportMap

CASES = [
    ("import torch\nx = torch.cuda.synchronize", "torch.cuda.synchronize"),
    ("import torch as th\nx = th.cuda.synchronize", "torch.cuda.synchronize"),
    ("from torch import cuda\nx = cuda.synchronize", "torch.cuda.synchronize"),
    ("import torch.cuda as tc\nx = tc.synchronize", "torch.cuda.synchronize"),
    ("from torch.cuda import amp\nx = amp.autocast", "torch.cuda.amp.autocast"),
    ("from torch.cuda.amp import autocast as ac\nx = ac", "torch.cuda.amp.autocast"),
    ("import torch.backends.cudnn as cudnn\nx = cudnn.benchmark", "torch.backends.cudnn.benchmark"),
    ("def f():\n    import torch\n    return 1\nx = torch.cuda", "torch.cuda"),
    ("try:\n    import torch\nexcept ImportError:\n    pass\nx = torch.cuda", "torch.cuda"),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from torch import cuda\nx = cuda", "torch.cuda"),
    ("import torch\ncudnn = torch.backends.cudnn\nx = cudnn.enabled", "torch.backends.cudnn.enabled"),
    ("import torch.cuda\nx = torch.cuda.Event", "torch.cuda.Event"),
]


@pytest.mark.parametrize("source, expected", CASES, ids=[c[1] + f"#{i}" for i, c in enumerate(CASES)])
def test_resolves(source, expected):
    tree = ast.parse(source)
    value = tree.body[-1].value
    assert ImportMap.from_module(tree).resolve(value) == expected


def test_unbound_names_do_not_resolve():
    tree = ast.parse("x = cuda.synchronize")
    assert ImportMap.from_module(tree).resolve(tree.body[0].value) is None


def test_relative_imports_keep_their_dots():
    tree = ast.parse("from .misc import is_torch_cuda_available as f\nx = f")
    assert ImportMap.from_module(tree).resolve(tree.body[-1].value) == ".misc.is_torch_cuda_available"
