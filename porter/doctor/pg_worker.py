"""One rank of `porter doctor`'s process-group check, run as a script (by the check, or by
torchrun to see the whole log): python pg_worker.py DEVICE_TYPE BACKEND [PACKAGE].

Imports the vendor package that registers DEVICE_TYPE and BACKEND (PACKAGE, by default
torch_<DEVICE_TYPE> as the vendors name theirs: torch_mlu, torch_npu; none for cuda), reads
RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT as torchrun sets them, initialises
BACKEND, all_reduces rank+1 on its card and prints one JSON line.
Imports nothing of porter's: it runs with whatever torch the machine has.
"""

from __future__ import annotations  # the machine's Python may be older than porter's

import datetime
import importlib
import json
import os
import sys


def main(device_type: str, backend: str, package: str | None = None) -> None:
    import torch

    if package is None and device_type != "cuda":
        package = f"torch_{device_type}"
    if package:
        try:
            importlib.import_module(package)  # registers torch.<device> and the backend
        except ImportError:
            if getattr(torch, device_type, None) is None:  # not a device torch has itself
                raise
    import torch.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    devices = getattr(torch, device_type)
    index = int(os.environ.get("LOCAL_RANK", rank)) % devices.device_count()
    devices.set_device(index)
    timeout = datetime.timedelta(seconds=float(os.environ.get("PORTER_DOCTOR_PG_TIMEOUT", "60")))
    dist.init_process_group(backend, rank=rank, world_size=world, timeout=timeout)
    tensor = torch.full((2,), float(rank + 1), device=f"{device_type}:{index}")
    dist.all_reduce(tensor)
    value = tensor.cpu().tolist()
    used = dist.get_backend()
    dist.destroy_process_group()
    print(json.dumps({"rank": rank, "backend": used, "device": f"{device_type}:{index}", "value": value}), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
