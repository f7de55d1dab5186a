"""Run the rendered train_lora.py (transformers.Trainer + peft) with a tiny model built here.

Nothing is downloaded: the model is a 2-layer Llama built from a config with random
weights, the tokenizer a word-level one trained on the tiny data sets written below. The
device is a parameter of the helpers (``cpu`` here); the same runs serve any device the
machine has, e.g. an emulated one.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")
tokenizers = pytest.importorskip("tokenizers")

from porter.lora import TARGETS, render_lora, target_facts  # noqa: E402

# The targets whose entry point imports a vendor package for its device (mlu, npu).
VENDOR_TARGETS = [name for name, facts in TARGETS.items() if facts.vendor_import]

DEVICE = "cpu"  # the --device the training runs use
LOSS_LINE = re.compile(r"step (\d+)/(\d+) loss ([0-9.]+)")
COLOURS = ["red", "blue", "green", "yellow", "black", "white", "pink", "brown"]
FRUITS = ["apple", "pear", "plum", "lemon", "grape"]
# A small chat template in the form models ship in tokenizer_config.json: a role header
# per message, the end token after each; the generation prompt opens an assistant turn.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} </s> {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)


def alpaca_records() -> list[dict]:
    """A small, learnable alpaca set: the answer is a fixed function of the prompt."""
    records = []
    for colour in COLOURS:
        for fruit in FRUITS:
            records.append({"instruction": "name the colour", "input": f"a {colour} {fruit}", "output": colour})
    for fruit in FRUITS:
        records.append({"instruction": f"repeat {fruit} twice", "input": "", "output": f"{fruit} {fruit}"})
    return records


def sharegpt_records() -> list[dict]:
    """Two-turn conversations with the same learnable answers, one with a system turn."""
    records = []
    for i, colour in enumerate(COLOURS):
        for fruit in FRUITS:
            turns = [
                {"from": "human", "value": f"name the colour of a {colour} {fruit}"},
                {"from": "gpt", "value": colour},
                {"from": "human", "value": f"repeat {fruit} twice"},
                {"from": "gpt", "value": f"{fruit} {fruit}"},
            ]
            record = {"conversations": turns}
            if i == 0:
                record["system"] = "you name colours"
            records.append(record)
    return records


def vocabulary_texts(records: list[dict]) -> list[str]:
    """Every word the prompts can contain, so the tokenizer knows them (no <unk> flood)."""
    prompt = (
        "Below is an instruction that describes a task, paired with an input that provides "
        "further context. Write a response that appropriately completes the request. "
        "### Instruction: Input: Response: <| user assistant system |> you name colours of"
    )
    return [prompt] + [json.dumps(r) for r in records]


def build_model(model_dir: Path, records: list[dict], chat_template: str | None = None) -> None:
    """Train a word-level tokenizer on the records and save it with a tiny random Llama."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<unk>", "<pad>", "<s>", "</s>"]
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(vocabulary_texts(records), trainers.WordLevelTrainer(special_tokens=specials))
    ids = {name: tok.token_to_id(name) for name in specials}
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", ids["<s>"])])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )
    if chat_template:
        fast.chat_template = chat_template
    fast.save_pretrained(model_dir)
    # initializer_range 0.2 (not 0.02): with a frozen random head, tiny weights give
    # near-uniform logits that LoRA alone cannot sharpen within 30 steps.
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


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> dict[str, Path]:
    """Two models (with and without a chat template), the data, and every target's script."""
    root = tmp_path_factory.mktemp("lora")
    alpaca, sharegpt = alpaca_records(), sharegpt_records()
    build_model(root / "model", alpaca + sharegpt)
    build_model(root / "chat_model", alpaca + sharegpt, chat_template=CHAT_TEMPLATE)
    data = root / "alpaca.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in alpaca) + "\n", encoding="utf-8")
    paths = {"root": root, "model": root / "model", "chat_model": root / "chat_model", "data": data}
    (root / "sharegpt.json").write_text(json.dumps(sharegpt), encoding="utf-8")
    paths["sharegpt"] = root / "sharegpt.json"
    for target in TARGETS:
        render_lora(root, root / target / "porter_lora", target)
        paths[target] = root / target / "porter_lora" / "train_lora.py"
    return paths


def run(cmd: list[str], cwd: Path, timeout: int = 240, env: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1", **(env or {}))
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


FAST = [
    "--logging_steps",
    "1",
    "--batch_size",
    "8",
    "--gradient_accumulation_steps",
    "1",
    "--learning_rate",
    "1e-2",
    "--cutoff_len",
    "64",
]


def train(
    script: Path, model: Path, data: Path, out: Path, *extra: str, device: str = DEVICE, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run train_lora.py directly, with small, fast settings, on ``device`` (``env``: e.g. the
    emulated MLU's, tests/test_lora_train_emulated.py)."""
    cmd = [
        sys.executable,
        str(script),
        "--model",
        str(model),
        "--data",
        str(data),
        "--output_dir",
        str(out),
        "--device",
        device,
        *FAST,
        *extra,
    ]
    proc = run(cmd, cwd=out.parent, env=env)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return proc


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def launch(
    script: Path,
    model: Path,
    data: Path,
    out: Path,
    *extra: str,
    device: str = DEVICE,
    nproc: int = 1,
    base_env: dict | None = None,
) -> subprocess.CompletedProcess:
    """Run train_lora.py through the rendered run_lora.sh beside it (torchrun when nproc > 1)."""
    env = {
        **(base_env or {}),
        "MODEL": str(model),
        "DATA": str(data),
        "OUTPUT_DIR": str(out),
        "DEVICE": device,
        "NPROC": str(nproc),
        "MASTER_PORT": str(free_port()),
        # run_lora.sh calls `python` and `torchrun`: this interpreter's.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    proc = run(["bash", str(script.with_name("run_lora.sh")), *FAST, *extra], cwd=out.parent, env=env)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return proc


def losses(stdout: str) -> list[tuple[int, float]]:
    """(global step, loss) per logged training step."""
    return [(int(m.group(1)), float(m.group(3))) for m in LOSS_LINE.finditer(stdout)]


def assert_loss_falls(values: list[float]) -> None:
    assert sum(values[-5:]) / 5 < 0.8 * sum(values[:5]) / 5, values


@pytest.fixture(scope="module")
def trained(workspace) -> tuple[subprocess.CompletedProcess, Path]:
    out = workspace["root"] / "out_single"
    proc = train(
        workspace["mlu"],
        workspace["model"],
        workspace["data"],
        out,
        "--max_steps",
        "30",
        "--save_steps",
        "10",
        "--merge_to",
        str(out / "merged"),
    )
    return proc, out


def test_training_lowers_the_loss(trained):
    proc, _ = trained
    assert f"device={DEVICE} precision={'fp32' if DEVICE == 'cpu' else ''}" in proc.stdout
    steps = losses(proc.stdout)
    assert [step for step, _ in steps] == list(range(1, 31)), proc.stdout
    assert_loss_falls([loss for _, loss in steps])
    assert "an Alpaca prompt" in proc.stdout  # the tokenizer has no chat template
    assert "final eval_loss" in proc.stdout


def test_checkpoint_resumes_at_its_global_step(trained, workspace):
    _, out = trained
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-10", "checkpoint-20", "checkpoint-30"]
    resumed = workspace["root"] / "out_resumed"
    shutil.copytree(out, resumed)
    proc = train(
        workspace["mlu"],
        workspace["model"],
        workspace["data"],
        resumed,
        "--max_steps",
        "33",
        "--save_steps",
        "10",
        "--resume_from_checkpoint",
        "last",
    )
    assert f"resuming from {resumed / 'checkpoint-30'}" in proc.stdout
    assert [step for step, _ in losses(proc.stdout)] == [31, 32, 33], proc.stdout
    assert "trained to step 33" in proc.stdout
    assert (resumed / "checkpoint-33" / "trainer_state.json").is_file()


def test_adapter_reloads_generates_and_matches_the_merge(trained, workspace):
    _, out = trained
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(out, local_files_only=True)
    base = AutoModelForCausalLM.from_pretrained(workspace["model"], local_files_only=True)
    model = peft.PeftModel.from_pretrained(base, out, local_files_only=True).eval()
    merged = AutoModelForCausalLM.from_pretrained(out / "merged", local_files_only=True).eval()
    inputs = tokenizer("### Instruction: name the colour ### Input: a red apple ### Response:", return_tensors="pt")
    with torch.no_grad():
        generated = model.generate(**inputs, max_new_tokens=4, do_sample=False, pad_token_id=tokenizer.pad_token_id)
        assert torch.allclose(model(**inputs).logits, merged(**inputs).logits, atol=1e-4)
        untrained = AutoModelForCausalLM.from_pretrained(workspace["model"], local_files_only=True)
        assert not torch.allclose(untrained(**inputs).logits, merged(**inputs).logits, atol=1e-3)
    assert generated.shape[1] > inputs["input_ids"].shape[1]


def test_run_lora_sh_two_processes(workspace):
    out = workspace["root"] / "out_ddp"
    proc = launch(
        workspace["hip"], workspace["model"], workspace["data"], out, "--max_steps", "12", "--val_size", "0", nproc=2
    )
    assert "backend=gloo world_size=2" in proc.stdout and "parallelism: DDP" in proc.stdout
    steps = losses(proc.stdout)
    assert [step for step, _ in steps] == list(range(1, 13))
    assert_loss_falls([loss for _, loss in steps])
    assert proc.stdout.count("step 1/12 loss") == 1  # printed by the first process only
    assert (out / "adapter_config.json").is_file()


def test_sharegpt_from_a_saved_dataset_with_the_models_chat_template(workspace):
    datasets = pytest.importorskip("datasets")
    saved = workspace["root"] / "sharegpt_disk"
    datasets.Dataset.from_list(sharegpt_records()).save_to_disk(str(saved))
    out = workspace["root"] / "out_chat"
    proc = launch(workspace["mlu"], workspace["chat_model"], saved, out, "--max_steps", "20", "--val_size", "0")
    assert f"device={DEVICE}" in proc.stdout and "world_size=1" in proc.stdout
    assert "40 sharegpt examples, formatted with the model's own chat template" in proc.stdout
    assert_loss_falls([loss for _, loss in losses(proc.stdout)])
    assert (out / "adapter_config.json").is_file()


def load_script(path: Path):
    """Import a rendered train_lora.py as a module (its main() does not run)."""
    spec = importlib.util.spec_from_file_location(f"train_lora_{path.parent.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def answer_text(example: dict, tokenizer) -> str:
    kept = [tid for tid, label in zip(example["input_ids"], example["labels"]) if label != -100]
    assert kept == [label for label in example["labels"] if label != -100]
    return tokenizer.decode(kept)


def test_only_answer_tokens_are_labelled(workspace):
    from transformers import AutoTokenizer

    script = load_script(workspace["hip"])
    chat = AutoTokenizer.from_pretrained(workspace["chat_model"], local_files_only=True)
    messages = script.to_messages(sharegpt_records()[0], "sharegpt")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant"]
    example = script.encode(script.chat_segments(messages, chat), chat, 128, plain=False)
    assert answer_text(example, chat) == "red </s> apple apple </s>"
    assert chat.decode(example["input_ids"]).startswith("<| system |> you name colours </s>")

    plain = AutoTokenizer.from_pretrained(workspace["model"], local_files_only=True)
    record = alpaca_records()[0]
    example = script.encode(script.plain_segments(record, "alpaca"), plain, 128, plain=True)
    assert answer_text(example, plain) == "red </s>"
    assert example["input_ids"][0] == plain.bos_token_id
    # A prompt longer than the cutoff leaves no answer token: the example is dropped.
    assert script.encode(script.plain_segments(record, "alpaca"), plain, 5, plain=True) is None


ERRORS = [
    pytest.param("mlu", ["--model", "{tmp}/nope", "--device", "cpu"], "is not a local directory", id="no-model"),
    pytest.param(
        "hip",
        ["--model", "{model}", "--device", "cpu", "--precision", "fp16"],
        "fp16 is not offered on cpu",
        id="fp16-on-cpu",
    ),
    pytest.param(
        "hip",
        ["--model", "{model}", "--device", "cpu", "--output_dir", "{tmp}", "--resume_from_checkpoint", "last"],
        "no checkpoint-N folder",
        id="nothing-to-resume",
    ),
    *(
        pytest.param(t, ["--model", "{model}", "--device", t], f"needs torch_{t}", id=f"no-torch_{t}")
        for t in VENDOR_TARGETS
    ),
]


@pytest.mark.parametrize("target,args,message", ERRORS)
def test_clear_errors(workspace, tmp_path, target, args, message):
    package = f"torch_{target}"
    if package in message and importlib.util.find_spec(package) is not None:
        pytest.skip(f"{package} is installed here")
    args = [a.format(tmp=tmp_path, model=workspace["model"]) for a in args]
    proc = run([sys.executable, str(workspace[target]), "--data", str(workspace["data"]), *args], cwd=tmp_path)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr[-2000:]


def test_eval_file_eval_steps_checkpointing_and_tensorboard(workspace):
    pytest.importorskip("tensorboard")
    root = workspace["root"]
    records = alpaca_records()
    (root / "train.json").write_text(json.dumps(records[:30]), encoding="utf-8")  # a JSON list
    (root / "eval.jsonl").write_text("\n".join(json.dumps(r) for r in records[30:]) + "\n", encoding="utf-8")
    out = root / "out_eval"
    proc = train(
        workspace["hip"],
        workspace["model"],
        root / "train.json",
        out,
        "--eval_file",
        str(root / "eval.jsonl"),
        "--max_steps",
        "4",
        "--eval_steps",
        "2",
        "--gradient_checkpointing",
        "--report_to",
        "tensorboard",
    )
    assert "examples: 30 train, 15 eval" in proc.stdout
    assert re.search(r"step 2/4 eval_loss [0-9.]+", proc.stdout) and re.search(r"step 4/4 eval_loss", proc.stdout)
    assert [step for step, _ in losses(proc.stdout)] == [1, 2, 3, 4]
    assert list(out.rglob("events.out.tfevents.*")), "no TensorBoard event file"
    config = json.loads((out / "checkpoint-4" / "trainer_state.json").read_text())
    assert config["global_step"] == 4


def test_deepspeed_zero3_two_processes_and_merge(workspace):
    pytest.importorskip("deepspeed")
    ds_dir = workspace["root"] / "ds" / "porter_lora"
    render_lora(workspace["root"], ds_dir, "mlu", deepspeed=True)
    out = workspace["root"] / "out_zero3"
    proc = run(
        [
            "bash",
            str(ds_dir / "run_lora.sh"),
            *FAST,
            "--max_steps",
            "5",
            "--val_size",
            "0",
            "--merge_to",
            str(out / "merged"),
        ],
        cwd=workspace["root"],
        env={
            "MODEL": str(workspace["model"]),
            "DATA": str(workspace["data"]),
            "OUTPUT_DIR": str(out),
            "DEVICE": DEVICE,
            "NPROC": "2",
            "MASTER_PORT": str(free_port()),
            "DS_CONFIG": str(ds_dir / "ds_config_zero3.json"),
            # DeepSpeed compiles its CPU communication op once into the torch extensions
            # cache; conftest points XDG_CACHE_HOME at a fresh folder, which would make
            # every run compile it again (minutes), so the usual folder is named.
            "TORCH_EXTENSIONS_DIR": os.environ.get(
                "TORCH_EXTENSIONS_DIR", os.path.expanduser("~/.cache/torch_extensions")
            ),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        },
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "world_size=2" in proc.stdout
    assert [step for step, _ in losses(proc.stdout)] == [1, 2, 3, 4, 5]
    # The adapter was gathered from the ZeRO-3 shards: reloaded, it equals the merged weights.
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(workspace["model"], local_files_only=True)
    model = peft.PeftModel.from_pretrained(base, out, local_files_only=True).eval()
    merged = AutoModelForCausalLM.from_pretrained(out / "merged", local_files_only=True).eval()
    ids = torch.tensor([[2, 5, 6, 7, 8]])
    with torch.no_grad():
        assert torch.allclose(model(input_ids=ids).logits, merged(input_ids=ids).logits, atol=1e-4)
        plain = AutoModelForCausalLM.from_pretrained(workspace["model"], local_files_only=True)
        assert not torch.allclose(plain(input_ids=ids).logits, merged(input_ids=ids).logits, atol=1e-3)


class FakeCards:
    """Stands in for torch.mlu / torch.npu / torch.cuda: what the device and precision choice asks."""

    def __init__(self, available: bool, bf16: bool = False, arch: str = ""):
        self.available, self.bf16, self.arch = available, bf16, arch
        self.compile_mode: dict = {}

    def set_compile_mode(self, **mode) -> None:  # torch_npu's
        self.compile_mode = mode

    def is_available(self) -> bool:
        return self.available

    def is_bf16_supported(self) -> bool:
        return self.bf16

    def get_device_properties(self, index: int):
        return type("Properties", (), {"gcnArchName": self.arch})()


@pytest.mark.parametrize(
    "bf16,requested,expected",
    [
        pytest.param(True, "auto", "bf16", id="auto-bf16-card"),
        pytest.param(False, "auto", "fp16", id="auto-fp16-card"),
        pytest.param(False, "bf16", "exit", id="bf16-asked-not-there"),
        pytest.param(False, "fp32", "fp32", id="fp32-asked"),
    ],
)
@pytest.mark.parametrize("target", VENDOR_TARGETS)
def test_vendor_precision_follows_the_card(workspace, monkeypatch, bf16, requested, expected, target):
    script = load_script(workspace[target])
    monkeypatch.setattr(script.torch, target, FakeCards(True, bf16=bf16), raising=False)
    if expected == "exit":
        with pytest.raises(SystemExit, match="bf16 is not supported here.*Use --precision fp16"):
            script.select_precision(requested, target, 0)
    else:
        assert script.select_precision(requested, target, 0)[0] == expected


@pytest.mark.parametrize(
    "arch,requested,expected",
    [
        pytest.param("gfx90a:sramecc+:xnack-", "auto", "bf16", id="MI200-bf16"),
        pytest.param("gfx906", "auto", "fp16", id="Z100-fp16"),
        pytest.param("gfx906", "bf16", "exit", id="Z100-bf16-asked"),
    ],
)
def test_hip_precision_follows_the_architecture(workspace, monkeypatch, arch, requested, expected):
    script = load_script(workspace["hip"])
    monkeypatch.setattr(script.torch, "cuda", FakeCards(True, bf16=True, arch=arch))  # ROCm always says bf16
    monkeypatch.setattr(script.torch.version, "hip", "6.2", raising=False)
    if expected == "exit":
        with pytest.raises(SystemExit, match="gfx906 is not known to have native bf16"):
            script.select_precision(requested, "cuda", 0)
    else:
        assert script.select_precision(requested, "cuda", 0)[0] == expected


@pytest.mark.parametrize("target", VENDOR_TARGETS)
def test_vendor_device_choice(workspace, monkeypatch, target):
    script = load_script(workspace[target])
    package = f"torch_{target}"
    monkeypatch.setitem(sys.modules, package, type(sys)(package))  # importable, as on the vendor's host
    cards = FakeCards(True)
    monkeypatch.setattr(script.torch, target, cards, raising=False)
    assert script.select_device("auto") == target
    # torch_npu compiles no operators per shape (LLaMA-Factory's setting); torch_mlu has no such switch.
    assert cards.compile_mode == ({"jit_compile": False} if target == "npu" else {})
    assert script.select_device("cpu") == "cpu"
    monkeypatch.setattr(script.torch, target, FakeCards(False), raising=False)
    assert script.select_device("auto") == "cpu"  # no card visible: train on the CPU
    with pytest.raises(SystemExit, match=f"no card is visible.*{target_facts(target).visible_devices_var}"):
        script.select_device(target)


def test_a_template_that_rewrites_past_turns_trains_on_the_last_answer(workspace):
    """Templates that drop earlier answers (as some do with past reasoning) break the prefix
    rule; then only the final answer is labelled, never text the model would not see."""
    from transformers import AutoTokenizer

    script = load_script(workspace["mlu"])
    chat = AutoTokenizer.from_pretrained(workspace["chat_model"], local_files_only=True)
    chat.chat_template = (
        "{% for m in messages %}{% if m['role'] == 'assistant' and not loop.last %}<|assistant|> </s> "
        "{% else %}<|{{ m['role'] }}|> {{ m['content'] }} </s> {% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|> {% endif %}"
    )
    messages = script.to_messages(sharegpt_records()[1], "sharegpt")
    example = script.encode(script.chat_segments(messages, chat), chat, 128, plain=False)
    assert answer_text(example, chat) == "pear pear </s>"
    # The input is the conversation as this template renders it: the first answer left out.
    assert "<| assistant |> </s> <| user |> repeat pear twice" in chat.decode(example["input_ids"])
