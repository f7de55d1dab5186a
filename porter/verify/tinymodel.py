"""Build a tiny local causal LM and a learnable alpaca set for the LoRA smoke run.

Run under the emulator as `python -m porter.verify.tinymodel DIR`; writes DIR/model (a
2-layer Llama with random weights and a word-level tokenizer trained here) and
DIR/alpaca.jsonl. Nothing is downloaded.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SHADES = ["red", "blue", "green", "yellow", "black", "white", "pink", "brown"]
THINGS = ["apple", "pear", "plum", "lemon", "grape"]
# The words of common alpaca prompt templates, so the tokenizer does not map them to <unk>.
PROMPT_WORDS = (
    "Below is an instruction that describes a task, paired with an input that provides "
    "further context. Write a response that appropriately completes the request. "
    "### Instruction: Input: Response:"
)


def records() -> list[dict]:
    """The answer is a fixed function of the prompt, so a few steps of LoRA lower the loss."""
    out = [{"instruction": "name the colour", "input": f"a {s} {t}", "output": s} for s in SHADES for t in THINGS]
    out += [{"instruction": f"repeat {t} twice", "input": "", "output": f"{t} {t}"} for t in THINGS]
    return out


def build(folder: Path) -> None:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    rows = records()
    specials = ["<unk>", "<pad>", "<s>", "</s>"]
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(
        [PROMPT_WORDS] + [" ".join(r.values()) for r in rows], trainers.WordLevelTrainer(special_tokens=specials)
    )
    ids = {name: tok.token_to_id(name) for name in specials}
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", ids["<s>"])])
    model_dir = folder / "model"
    PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    ).save_pretrained(model_dir)
    # initializer_range 0.2: with a frozen random head, smaller weights give near-uniform
    # logits that LoRA alone cannot sharpen in a dozen steps.
    config = LlamaConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=128,
        initializer_range=0.2,
        pad_token_id=ids["<pad>"],
        bos_token_id=ids["<s>"],
        eos_token_id=ids["</s>"],
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(model_dir)
    (folder / "alpaca.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")


if __name__ == "__main__":
    build(Path(sys.argv[1]))
