"""The screens in front of every parse: WordScreen finds what the word regex finds, ImportScreen
finds every spelling of an import."""

from __future__ import annotations

import random
import re

from porter.core.wordregex import WordScreen

WORDS = ["cuda", "cudnn", "cupy", "cupyx", "nccl", "fla", "flash_attn", "flash_attention_2", "a", "ab", "abc"]
PREFIXES = ["NCCL_", "TORCH_NCCL_", "ab_"]


def _flat(words, prefixes):
    return re.compile(
        r"\b(?:" + "|".join([re.escape(w) + r"\b" for w in words] + [re.escape(p) for p in prefixes]) + ")"
    )


def test_word_screen_finds_what_the_regex_finds():
    """The token screen says yes wherever `\\b(?:words\\b|prefixes)|inner` matches; on ASCII
    text, exactly there."""
    words, inner = WORDS + ["nvidia-smi"], ["_CUDA_ON"]
    screen = WordScreen(words, PREFIXES, inner)
    regex = re.compile(_flat(words, PREFIXES).pattern + "|" + "|".join(map(re.escape, inner)))
    rng = random.Random(11)
    pieces = (
        words + PREFIXES + inner + ["x", "_", " ", ".", "-", "2", "cu", "flash", "NCCL", "abcd", "nvidia", "RWKV", "\n"]
    )
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        assert screen.search(text) == bool(regex.search(text)), text


def test_word_screen_on_other_text():
    screen = WordScreen(["cuda"], ["NCCL_"], ["_CUDA_ON"])
    assert screen.search("x.cuda()") and screen.search("NCCL_DEBUG=1") and screen.search("RWKV_CUDA_ON = 1")
    assert not screen.search("use_cuda_amp = cudas") and not screen.search("MY_NCCL_X")
    # Outside ASCII a word splits: the screen may say yes where the regex would not (a closer
    # look follows), never no where it would.
    assert screen.search("écuda = 1") and screen.search("x = 'cuda'  # café")
    assert not WordScreen([]).search("cuda")


def test_import_screen_finds_every_spelling_of_an_import():
    from porter.core.wordregex import ImportScreen

    screen = ImportScreen(["vllm", "torch"])
    for text in (
        "import vllm",
        "import vllm.engine as e",
        "import os, vllm",
        "import numpy as np,torch",
        "from vllm import LLM",
        "from torch.nn import functional",
        "if x:\n    from \\\n  vllm import a",
        "x = 1; import torch",
    ):
        assert screen.search(text), text
    for text in (
        'choices=["vllm", "sglang"]',
        "import vllmx",
        "from vllm_ext import a",
        "# uses vllm",
        "import os  # , vllm",
    ):
        assert not screen.search(text), text
    assert not ImportScreen([]).search("import vllm")
    # A package that matters only where imported: a word of the text first, then the import.
    words = WordScreen(["cuda"], imported=["vllm"])
    assert words.search("import vllm") and words.search("x.cuda()")
    assert not words.search('backend = "vllm"')
