"""Python building blocks of the synthetic repository: CUDA uses, traps, plain filler.

Each block is a module-level unit (function, class or assignment) plus the imports it
needs; `@N@` is replaced by a number unique in its file so that names do not clash. The
CUDA blocks cover the patterns in docs/PATTERNS.md ("must be converted"); the trap blocks
cover the "must not change" list; the filler is the plain Python that makes up most of a
real training repository (data processing, dataclasses, argparse, logging).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Block:
    imports: tuple[str, ...]
    text: str


def _b(imports: str, text: str) -> Block:
    return Block(tuple(line for line in imports.strip().splitlines() if line), text.strip("\n") + "\n")


CUDA_BLOCKS = [
    _b(
        "import torch",
        '''
def pick_device_@N@(local_rank: int = 0) -> "torch.device":
    """Return this rank's accelerator, or the CPU when there is none."""
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    return torch.device("cpu")
''',
    ),
    _b(
        "import torch",
        """
def device_names_@N@(rank: int, local_rank: int) -> list:
    names = ["cuda", 'cuda:0', f"cuda:{local_rank}", "cuda:{}".format(rank)]
    names.append("cuda:" + str(rank))
    names.append(torch.device(f"cuda:{torch.cuda.current_device()}"))
    return names
""",
    ),
    _b(
        "import torch",
        """
DEVICE_@N@ = "cuda" if torch.cuda.is_available() else "cpu"


def default_device_@N@() -> str:
    if torch.cuda.is_available():
        device = "cuda"
    else:
        device = "cpu"
    return device
""",
    ),
    _b(
        "import torch",
        """
def to_accelerator_@N@(model, batch, local_rank: int = 0):
    model = model.half().cuda()
    inputs = {k: v.cuda(local_rank) for k, v in batch.items()}
    if not inputs["input_ids"].is_cuda:
        raise RuntimeError("inputs were not moved")
    if inputs["input_ids"].device.type == "cuda":
        torch.cuda.synchronize()
    return model.cuda(), inputs
""",
    ),
    _b(
        "import torch\nfrom torch.cuda.amp import GradScaler, autocast",
        """
def train_step_@N@(model, batch, optimizer, scaler: "GradScaler"):
    with autocast(dtype=torch.float16):
        loss = model(**batch).loss
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


@torch.cuda.amp.autocast()
def eval_step_@N@(model, batch):
    with torch.cuda.amp.autocast(enabled=True):
        return model(**batch).logits.float()
""",
    ),
    _b(
        "import torch\nfrom torch.cuda.amp import custom_bwd, custom_fwd",
        """
class ScaledMul@N@(torch.autograd.Function):
    @staticmethod
    @custom_fwd
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x * scale

    @staticmethod
    @custom_bwd
    def backward(ctx, grad):
        return grad * ctx.scale, None
""",
    ),
    _b(
        "import torch\nfrom transformers.utils import is_torch_npu_available, is_torch_xpu_available",
        """
def get_current_device_@N@() -> "torch.device":
    if is_torch_xpu_available():
        device = "xpu:{}".format(torch.xpu.current_device())
    elif is_torch_npu_available():
        device = "npu:{}".format(torch.npu.current_device())
    elif torch.cuda.is_available():
        device = "cuda:{}".format(torch.cuda.current_device())
    else:
        device = "cpu"
    return torch.device(device)
""",
    ),
    _b(
        "import os\nimport torch\nimport torch.distributed as dist",
        """
def init_distributed_@N@(args) -> None:
    args.dist_backend = "nccl"
    backend = getattr(args, "backend", "nccl")
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl", init_method="env://")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.barrier(device_ids=[local_rank])
    return backend
""",
    ),
    _b(
        "import os",
        """
def configure_env_@N@(gpus: str, port: int) -> str:
    os.environ["CUDA_VISIBLE_DEVICES"] = gpus
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    os.environ.pop("CUDA_LAUNCH_BLOCKING", None)
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
    os.environ["TORCH_NCCL_AVOID_RECORD_STREAMS"] = "1"
    os.environ["NCCL_P2P_DISABLE"] = "1"
    return f"CUDA_VISIBLE_DEVICES={visible} torchrun --master_port {port} train.py"
""",
    ),
    _b(
        "import torch",
        """
def choose_dtype_@N@(prefer_bf16: bool = True) -> "torch.dtype":
    if prefer_bf16 and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    if torch.cuda.get_device_capability()[0] >= 8:
        return torch.bfloat16
    if torch.version.cuda is not None and torch.version.cuda.startswith("11"):
        return torch.float16
    return torch.float32
""",
    ),
    _b(
        "import torch\nfrom transformers import BitsAndBytesConfig",
        """
def quantization_config_@N@(bits: int):
    try:
        import bitsandbytes as bnb
    except ImportError:
        bnb = None
    if bits == 4:
        return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
    if bits == 8 and bnb is not None:
        return BitsAndBytesConfig(load_in_8bit=True)
    return None
""",
    ),
    _b(
        "import bitsandbytes as bnb\nfrom peft import prepare_model_for_kbit_training",
        """
def build_optimizer_@N@(model, lr: float = 2e-5):
    model = prepare_model_for_kbit_training(model)
    params = [p for p in model.parameters() if p.requires_grad]
    return bnb.optim.AdamW8bit(params, lr=lr, betas=(0.9, 0.95))
""",
    ),
    _b(
        "from transformers import AutoModelForCausalLM",
        """
def load_model_@N@(name: str, flash: bool = True):
    try:
        import flash_attn  # noqa: F401
        has_fa = True
    except ImportError:
        has_fa = False
    kwargs = {"torch_dtype": "auto", "device_map": "cuda"}
    if flash and has_fa:
        kwargs["attn_implementation"] = "flash_attention_2"
    return AutoModelForCausalLM.from_pretrained(name, **kwargs)
""",
    ),
    _b(
        "import torch\nfrom transformers import AutoModelForCausalLM",
        """
def load_for_inference_@N@(path: str, ckpt: str):
    model = AutoModelForCausalLM.from_pretrained(path, device_map={"": "cuda:0"}, use_flash_attention_2=True)
    state = torch.load(ckpt, map_location="cuda")
    model.load_state_dict(state, strict=False)
    other = AutoModelForCausalLM.from_pretrained(path, device_map={"": torch.cuda.current_device()})
    return model, other
""",
    ),
    _b(
        "import logging\nimport torch",
        """
def generate_safely_@N@(model, inputs, logger: logging.Logger):
    try:
        return model.generate(**inputs, max_new_tokens=128)
    except torch.cuda.OutOfMemoryError:
        logger.warning("Out of memory, retrying with a smaller batch.")
        torch.cuda.empty_cache()
        used = torch.cuda.memory_allocated() / 2**30
        logger.info("allocated after cleanup: %.2f GiB", used)
        return None
""",
    ),
    _b(
        "import torch\nfrom torch.profiler import ProfilerActivity, profile",
        """
def time_forward_@N@(model, batch) -> float:
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream), profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
        start.record()
        model(**batch)
        end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)
""",
    ),
    _b(
        "import torch as th",
        """
def count_devices_@N@() -> int:
    if not th.cuda.is_available():
        return 0
    return th.cuda.device_count()
""",
    ),
    _b(
        "from torch import cuda",
        """
def free_memory_@N@() -> int:
    if cuda.is_available():
        cuda.empty_cache()
        return cuda.mem_get_info()[0]
    return 0
""",
    ),
    _b(
        "import torch.cuda as tc\nfrom torch.cuda import amp",
        """
def reset_peak_@N@() -> int:
    tc.reset_peak_memory_stats()
    scaler = amp.GradScaler()
    return tc.max_memory_allocated() + int(scaler.get_scale())
""",
    ),
    _b(
        "import torch.backends.cudnn as cudnn",
        """
def set_deterministic_@N@(seed: int) -> None:
    cudnn.benchmark = True
    cudnn.deterministic = False
    import torch
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
""",
    ),
    _b(
        "import torch",
        """
def device_module_@N@(device_type: str = "cuda"):
    module = getattr(torch, device_type, torch.cuda)
    fallback = getattr(torch, "cuda")
    return module if hasattr(module, "device_count") else fallback
""",
    ),
    _b(
        "import torch\nfrom torch.utils.data import DataLoader",
        """
def make_loader_@N@(dataset, batch_size: int, device: str = "cuda") -> DataLoader:
    return DataLoader(dataset, batch_size=batch_size, pin_memory=True, pin_memory_device="cuda")


def autocast_context_@N@(enabled: bool):
    return torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=enabled)
""",
    ),
    _b(
        "import argparse",
        """
def add_device_args_@N@(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="where to train")
    parser.add_argument("--dist_backend", default="nccl")
    parser.add_argument("--flash_attn", default="fa2", choices=["auto", "disabled", "sdpa", "fa2"])
""",
    ),
    _b(
        "from transformers.utils import is_torch_cuda_available",
        """
def accelerator_count_@N@() -> int:
    if is_torch_cuda_available():
        import torch
        return torch.cuda.device_count()
    return 0
""",
    ),
    _b(
        "from typing import TYPE_CHECKING\nimport torch",
        """
if TYPE_CHECKING:
    from torch.cuda import Stream


def side_stream_@N@() -> "Stream":
    return torch.cuda.current_stream()
""",
    ),
    _b(
        "import torch",
        """
try:
    from torch.cuda.amp import GradScaler as Scaler@N@
except ImportError:
    Scaler@N@ = None


def make_scaler_@N@(enabled: bool):
    return Scaler@N@(enabled=enabled) if Scaler@N@ is not None else torch.amp.GradScaler("cuda")
""",
    ),
]


TRAP_BLOCKS = [
    _b(
        "import torch",
        '''
def move_batch_@N@(batch: dict, device) -> dict:
    """Move every tensor of `batch` to `device`.

    Example:
        >>> move_batch_@N@({"x": torch.ones(1)}, device='cuda')

    Usage: export CUDA_VISIBLE_DEVICES=0 before running this on a CUDA machine.
    """
    # CUDA tensors are moved asynchronously; CPU tensors are copied.
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}
''',
    ),
    _b(
        "import logging",
        """
def warn_no_accelerator_@N@(logger: logging.Logger, cuda_enabled: bool, use_cuda_amp: bool) -> None:
    if not cuda_enabled:
        logger.warning("CUDA environment was not detected.")
    if use_cuda_amp:
        logger.info("Mixed precision on accelerators (CUDA/NPU) is enabled.")
""",
    ),
    _b(
        "from enum import Enum",
        """
class ErrorCode@N@(Enum):
    OK = 0
    CUDA_OUT_OF_MEMORY = 1
    NCCL_TIMEOUT = 2


LOCALES_@N@ = {"warn_no_cuda": {"en": "CUDA environment was not detected.", "zh": "未检测到 CUDA 环境。"}}
""",
    ),
    _b(
        "",
        '''
class CudaFusedMoEKernel@N@:
    """Stands in for a kernel registry keyed on the CUDA device type; the key must stay."""

    registry = {"cuda": "cuda_fused_moe", "npu": "npu_fused_moe"}

    def update_weight_cuda_ipc(self, handles: list) -> int:
        return len(handles)
''',
    ),
    _b(
        "",
        """
def training_arguments_@N@(num_gpus: int, per_gpu_train_batch_size: int) -> dict:
    return {
        "half_precision_backend": "cuda_amp",
        "per_device_train_batch_size": per_gpu_train_batch_size,
        "gradient_accumulation_steps": max(1, 64 // (num_gpus * per_gpu_train_batch_size)),
        "docker_dir": "docker/docker-cuda/",
        "docs": "https://developer.nvidia.com/cuda-downloads",
        "eval_tasks": ["mmlu", "cmmlu", "ceval"],
    }
""",
    ),
    _b(
        "import random",
        """
def restore_rng_@N@(checkpoint_rng_state: dict) -> None:
    random.setstate(checkpoint_rng_state["python"])
    cuda_state = checkpoint_rng_state["cuda"]
    if cuda_state is None:
        return


def is_h100_@N@(device_name: str) -> bool:
    return "NVIDIA H100" in device_name
""",
    ),
    _b(
        "import torch\nfrom transformers.utils import is_torch_cuda_available, is_torch_npu_available",
        """
def fused_kernels_enabled_@N@() -> bool:
    if is_torch_npu_available():
        torch.npu.set_compile_mode(jit_compile=False)
        return False
    if is_torch_cuda_available():
        try:
            import triton  # noqa: F401
        except ImportError:
            return False
        return True
    return False
""",
    ),
]


FILLER_BLOCKS = [
    _b(
        "from dataclasses import dataclass, field",
        '''
@dataclass
class DataArguments@N@:
    """Which data to train on and how to cut it."""

    dataset: str = "alpaca_en_demo"
    dataset_dir: str = "data"
    cutoff_len: int = 2048
    train_on_prompt: bool = False
    mask_history: bool = False
    streaming: bool = False
    buffer_size: int = 16384
    mix_strategy: str = "concat"
    interleave_probs: list = field(default_factory=list)
    overwrite_cache: bool = False
    preprocessing_num_workers: int = 8
    val_size: float = 0.0

    def __post_init__(self) -> None:
        if self.streaming and self.val_size > 1e-6 and self.val_size > 1:
            raise ValueError("Streaming mode requires an integer val_size.")
        if self.mix_strategy not in ("concat", "interleave_under", "interleave_over"):
            raise ValueError(f"Unknown mix strategy: {self.mix_strategy}")
''',
    ),
    _b(
        "import argparse",
        """
def build_parser_@N@() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Prepare and tokenize a dataset.")
    parser.add_argument("--input", required=True, help="a JSON lines file")
    parser.add_argument("--output", required=True, help="where to write the shards")
    parser.add_argument("--max_length", type=int, default=2048)
    parser.add_argument("--num_shards", type=int, default=8)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--lowercase", action="store_true")
    parser.add_argument("--template", default="default", choices=["default", "chatml", "llama3"])
    return parser
""",
    ),
    _b(
        "import json\nfrom pathlib import Path",
        '''
def read_jsonl_@N@(path: Path, limit: int | None = None) -> list[dict]:
    """Read up to `limit` records, skipping blank and malformed lines."""
    records: list[dict] = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                print(f"{path}:{number}: skipped a malformed record")
            if limit is not None and len(records) >= limit:
                break
    return records
''',
    ),
    _b(
        "",
        '''
def pack_sequences_@N@(lengths: list[int], capacity: int) -> list[list[int]]:
    """Greedy first-fit packing of sequence indices into bins of `capacity` tokens."""
    bins: list[list[int]] = []
    space: list[int] = []
    for index in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        size = lengths[index]
        for b, free in enumerate(space):
            if size <= free:
                bins[b].append(index)
                space[b] -= size
                break
        else:
            bins.append([index])
            space.append(capacity - size)
    return bins
''',
    ),
    _b(
        "import math",
        """
def cosine_schedule_@N@(step: int, warmup: int, total: int, base_lr: float, min_ratio: float = 0.1) -> float:
    if step < warmup:
        return base_lr * (step + 1) / max(1, warmup)
    progress = (step - warmup) / max(1, total - warmup)
    cosine = 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))
    return base_lr * (min_ratio + (1.0 - min_ratio) * cosine)
""",
    ),
    _b(
        "import logging\nimport sys",
        """
def get_logger_@N@(name: str, level: int = logging.INFO) -> logging.Logger:
    logger = logging.getLogger(name)
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stdout)
        formatter = logging.Formatter("[%(levelname)s|%(name)s:%(lineno)d] %(asctime)s >> %(message)s")
        handler.setFormatter(formatter)
        logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    return logger
""",
    ),
    _b(
        "from collections import defaultdict",
        '''
class MetricTracker@N@:
    """Running means of named metrics, reset at every logging step."""

    def __init__(self) -> None:
        self.sums: dict[str, float] = defaultdict(float)
        self.counts: dict[str, int] = defaultdict(int)

    def update(self, **values: float) -> None:
        for name, value in values.items():
            self.sums[name] += float(value)
            self.counts[name] += 1

    def compute(self) -> dict[str, float]:
        return {name: self.sums[name] / self.counts[name] for name in self.sums if self.counts[name]}

    def reset(self) -> None:
        self.sums.clear()
        self.counts.clear()
''',
    ),
    _b(
        "import re",
        """
_SPACES_@N@ = re.compile(r"\\s+")
_URL_@N@ = re.compile(r"https?://\\S+")


def normalize_text_@N@(text: str, lowercase: bool = False, strip_urls: bool = True) -> str:
    if strip_urls:
        text = _URL_@N@.sub(" ", text)
    text = _SPACES_@N@.sub(" ", text).strip()
    return text.lower() if lowercase else text
""",
    ),
    _b(
        "from typing import Any",
        """
def collate_@N@(features: list[dict[str, Any]], pad_id: int, label_pad: int = -100) -> dict[str, list]:
    longest = max(len(f["input_ids"]) for f in features)
    batch: dict[str, list] = {"input_ids": [], "attention_mask": [], "labels": []}
    for f in features:
        pad = longest - len(f["input_ids"])
        batch["input_ids"].append(f["input_ids"] + [pad_id] * pad)
        batch["attention_mask"].append([1] * len(f["input_ids"]) + [0] * pad)
        labels = f.get("labels", f["input_ids"])
        batch["labels"].append(labels + [label_pad] * pad)
    return batch
""",
    ),
    _b(
        "import os\nimport json",
        """
def save_config_@N@(config: dict, output_dir: str, name: str = "training_args.json") -> str:
    os.makedirs(output_dir, exist_ok=True)
    path = os.path.join(output_dir, name)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=2, sort_keys=True)
        handle.write("\\n")
    return path


def load_config_@N@(path: str) -> dict:
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no config at {path}")
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)
""",
    ),
    _b(
        "from dataclasses import dataclass",
        '''
@dataclass(frozen=True)
class Template@N@:
    """A chat template: how roles and turns become one string."""

    name: str
    system: str = ""
    user_prefix: str = "<|user|>\\n"
    assistant_prefix: str = "<|assistant|>\\n"
    separator: str = "\\n"

    def render(self, messages: list[dict[str, str]]) -> str:
        parts = [self.system] if self.system else []
        for message in messages:
            prefix = self.user_prefix if message["role"] == "user" else self.assistant_prefix
            parts.append(prefix + message["content"])
        return self.separator.join(parts)
''',
    ),
    _b(
        "import hashlib\nfrom pathlib import Path",
        """
def file_digest_@N@(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        while True:
            data = handle.read(chunk)
            if not data:
                break
            h.update(data)
    return h.hexdigest()


def find_checkpoints_@N@(output_dir: Path, prefix: str = "checkpoint") -> list[Path]:
    found = [p for p in output_dir.glob(f"{prefix}-*") if p.is_dir()]
    return sorted(found, key=lambda p: int(p.name.rsplit("-", 1)[-1]))
""",
    ),
    _b(
        "",
        """
def split_dataset_@N@(records: list, val_size: float, seed: int = 42) -> tuple[list, list]:
    import random

    if not 0.0 <= val_size < 1.0:
        raise ValueError("val_size must be in [0, 1)")
    order = list(range(len(records)))
    random.Random(seed).shuffle(order)
    cut = int(len(records) * (1.0 - val_size))
    train = [records[i] for i in order[:cut]]
    val = [records[i] for i in order[cut:]]
    return train, val
""",
    ),
]


HEADER = """# Copyright 2025 the synthetic benchmark authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
"""
