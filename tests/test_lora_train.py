"""Run the rendered train_lora.py on CPU with a tiny model and tokenizer built here.

Nothing is downloaded: the model is a 2-layer Llama built from a config with random
weights, the tokenizer a word-level one trained on the tiny alpaca set written below.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")
tokenizers = pytest.importorskip("tokenizers")

from porter.lora import render_lora  # noqa: E402

LOSS_LINE = re.compile(r"step (\d+)/(\d+) loss ([0-9.]+)")
COLOURS = ["red", "blue", "green", "yellow", "black", "white", "pink", "brown"]
FRUITS = ["apple", "pear", "plum", "lemon", "grape"]


def alpaca_records() -> list[dict]:
    """A small, learnable alpaca set: the answer is a fixed function of the prompt."""
    records = []
    for colour in COLOURS:
        for fruit in FRUITS:
            records.append({"instruction": "name the colour", "input": f"a {colour} {fruit}", "output": colour})
    for fruit in FRUITS:
        records.append({"instruction": f"repeat {fruit} twice", "input": "", "output": f"{fruit} {fruit}"})
    return records


def prompt_words() -> str:
    # The words of the script's alpaca prompt, so the tokenizer knows them (no <unk> flood).
    return ("Below is an instruction that describes a task, paired with an input that provides "
            "further context. Write a response that appropriately completes the request. "
            "### Instruction: Input: Response:")


def build_model(model_dir: Path, records: list[dict]) -> None:
    """Train a word-level tokenizer on the records and save it with a tiny random Llama."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<unk>", "<pad>", "<s>", "</s>"]
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    texts = [prompt_words()] + [" ".join(r.values()) for r in records]
    tok.train_from_iterator(texts, trainers.WordLevelTrainer(special_tokens=specials))
    ids = {name: tok.token_to_id(name) for name in specials}
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", ids["<s>"])])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>",
                                   bos_token="<s>", eos_token="</s>")
    fast.save_pretrained(model_dir)
    # initializer_range 0.2 (not 0.02): with a frozen random head, tiny weights give
    # near-uniform logits that LoRA alone cannot sharpen within 30 steps.
    config = LlamaConfig(vocab_size=tok.get_vocab_size(), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=128, initializer_range=0.2,
                         pad_token_id=ids["<pad>"], bos_token_id=ids["<s>"], eos_token_id=ids["</s>"])
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(model_dir)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> dict[str, Path]:
    """A model dir, a JSONL data file, and the entry point rendered for both targets."""
    root = tmp_path_factory.mktemp("lora")
    records = alpaca_records()
    build_model(root / "model", records)
    data = root / "alpaca.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    paths = {"root": root, "model": root / "model", "data": data}
    for target in ("mlu", "hip"):
        render_lora(root, root / target / "porter_lora", target)
        paths[target] = root / target / "porter_lora" / "train_lora.py"
    return paths


def run(cmd: list[str], cwd: Path, timeout: int = 240) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def losses(stdout: str) -> list[float]:
    return [float(m.group(3)) for m in LOSS_LINE.finditer(stdout)]


COMMON = ["--device", "cpu", "--logging_steps", "1", "--batch_size", "8",
          "--gradient_accumulation_steps", "1", "--learning_rate", "1e-2", "--cutoff_len", "64"]


@pytest.fixture(scope="module")
def trained(workspace) -> tuple[subprocess.CompletedProcess, Path]:
    out = workspace["root"] / "out_single"
    proc = run([sys.executable, str(workspace["mlu"]), "--model", str(workspace["model"]),
                "--data", str(workspace["data"]), "--output_dir", str(out), "--max_steps", "30",
                "--merge", *COMMON], cwd=workspace["root"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc, out


def test_cpu_training_lowers_the_loss(trained):
    proc, _ = trained
    assert "device=cpu precision=fp32" in proc.stdout
    values = losses(proc.stdout)
    assert len(values) == 30, proc.stdout
    assert sum(values[-5:]) / 5 < sum(values[:5]) / 5, values
    assert values[-1] < values[0], values
    assert "final eval_loss" in proc.stdout


def test_adapter_saved_reloads_and_generates(trained, workspace):
    _, out = trained
    assert (out / "adapter_config.json").is_file()
    assert any(out.glob("adapter_model.*"))
    assert (out / "merged" / "config.json").is_file()
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(out, local_files_only=True)
    base = AutoModelForCausalLM.from_pretrained(workspace["model"], local_files_only=True)
    model = PeftModel.from_pretrained(base, out, local_files_only=True).eval()
    inputs = tokenizer("### Instruction: name the colour", return_tensors="pt")
    with torch.no_grad():
        generated = model.generate(**inputs, max_new_tokens=4, do_sample=False,
                                   pad_token_id=tokenizer.pad_token_id)
    assert generated.shape[1] > inputs["input_ids"].shape[1]
    assert isinstance(tokenizer.decode(generated[0]), str)


def test_torchrun_two_processes_on_gloo(workspace):
    torchrun = shutil.which("torchrun") or str(Path(sys.executable).with_name("torchrun"))
    out = workspace["root"] / "out_ddp"
    proc = run([torchrun, "--nproc_per_node", "2", "--standalone", str(workspace["hip"]),
                "--model", str(workspace["model"]), "--data", str(workspace["data"]),
                "--output_dir", str(out), "--max_steps", "3", *COMMON], cwd=workspace["root"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "backend=gloo world_size=2" in proc.stdout
    assert len(losses(proc.stdout)) == 3
    assert (out / "adapter_config.json").is_file()


def test_clear_errors_for_missing_model_and_missing_torch_mlu(workspace, tmp_path):
    missing = run([sys.executable, str(workspace["mlu"]), "--model", str(tmp_path / "nope"),
                   "--data", str(workspace["data"]), "--device", "cpu"], cwd=tmp_path)
    assert missing.returncode != 0
    assert "is not a local directory" in missing.stderr
    try:
        import torch_mlu  # noqa: F401
    except ImportError:
        no_mlu = run([sys.executable, str(workspace["mlu"]), "--model", str(workspace["model"]),
                      "--data", str(workspace["data"]), "--device", "mlu"], cwd=tmp_path)
        assert no_mlu.returncode != 0
        assert "needs torch_mlu" in no_mlu.stderr
