"""The trie-shaped word regex matches exactly what the flat alternation matches."""

from __future__ import annotations

import random
import re

from porter.core.wordregex import word_alternation

WORDS = ["cuda", "cudnn", "cupy", "cupyx", "nccl", "fla", "flash_attn", "flash_attention_2", "a", "ab", "abc"]
PREFIXES = ["NCCL_", "TORCH_NCCL_", "ab_"]


def _flat(words, prefixes):
    return re.compile(r"\b(?:" + "|".join([re.escape(w) + r"\b" for w in words] + [re.escape(p) for p in prefixes]) + ")")


def test_same_matches_as_the_flat_alternation():
    trie = re.compile(r"\b" + word_alternation(WORDS, PREFIXES))
    flat = _flat(WORDS, PREFIXES)
    rng = random.Random(7)
    pieces = WORDS + PREFIXES + ["x", "_", " ", ".", "2", "cu", "flash", "NCCL", "abcd"]
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 5)))
        assert bool(trie.search(text)) == bool(flat.search(text)), text


def test_whole_words_and_prefixes():
    rx = re.compile(r"\b" + word_alternation(["cuda", "cupy"], ["NCCL_"]))
    assert rx.search("x.cuda()") and rx.search("import cupy") and rx.search("NCCL_DEBUG=1")
    assert not rx.search("use_cuda_amp = cudas + cupyx")
    assert not rx.search("MY_NCCL_X")
