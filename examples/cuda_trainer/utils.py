"""Device helpers for the example trainer."""

import gc
import os

import torch


def get_device() -> torch.device:
    if torch.cuda.is_available():
        return torch.device(f"cuda:{os.environ.get('LOCAL_RANK', '0')}")
    return torch.device("cpu")


def torch_gc() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
