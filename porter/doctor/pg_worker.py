"""One rank of `porter doctor`'s process-group check, run as a script (by the check, or by
torchrun to see the whole log): python pg_worker.py DEVICE_TYPE BACKEND.

Reads RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT as torchrun sets them,
initialises BACKEND, all_reduces rank+1 on its card and prints one JSON line.
Imports nothing of porter's: it runs with whatever torch the machine has.
"""

import datetime
import json
import os
import sys


def main(device_type: str, backend: str) -> None:
    import torch

    if device_type == "mlu":
        import torch_mlu  # noqa: F401  (registers torch.mlu and the cncl backend)
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
    main(sys.argv[1], sys.argv[2])
