"""Fine-tune a causal LM on one or more NVIDIA GPUs (porter's example).

Launch: CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 2 train.py --model ./my-model
"""

import argparse
import os

import torch
import torch.distributed as dist
from transformers import AutoModelForCausalLM

from utils import get_device, torch_gc


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, help="local model directory")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        dist.init_process_group(backend="nccl")
    device = get_device() if args.device == "cuda" else torch.device("cpu")

    model = AutoModelForCausalLM.from_pretrained(args.model, attn_implementation="flash_attention_2").to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    scaler = torch.cuda.amp.GradScaler()
    for step in range(args.steps):
        batch = torch.randint(0, model.config.vocab_size, (2, 64)).cuda()
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = model(input_ids=batch, labels=batch).loss
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        # log the loss and the CUDA memory in use
        print(f"step {step}: loss {loss.item():.4f}, memory {torch.cuda.memory_allocated() / 2**20:.0f} MiB")
    torch_gc()


if __name__ == "__main__":
    main()
