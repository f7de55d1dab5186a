"""Compile (once) and load the emulator's C++ extension.

The build is keyed by the source text and the torch version: a C++ extension is tied to
the ABI of the torch it was compiled against. It lands in porter's user cache directory,
never in the source tree, and a second process finds it there in milliseconds.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from porter.core.datafiles import default_cache_dir

SOURCE = Path(__file__).with_name("csrc") / "mlu_emulator.cpp"
NAME = "porter_mlu_emulator"


def torch_version() -> str:
    """The installed torch's version, read without importing torch (porter's own process
    decides whether a build is needed; importing torch there would cost seconds)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torch")
    except PackageNotFoundError:
        raise RuntimeError("the emulator needs torch: pip install 'cuda-porter[emulate]'") from None


def build_dir() -> Path:
    key = hashlib.sha256(SOURCE.read_bytes() + torch_version().encode()).hexdigest()[:16]
    root = os.environ.get("PORTER_EMULATOR_CACHE") or str(default_cache_dir() / "emulator")
    return Path(root) / key


def is_built() -> bool:
    return (build_dir() / f"{NAME}.so").is_file()


def load_extension(verbose: bool = False):
    """The compiled module (building it the first time: about a minute on 2 cores)."""
    from torch.utils import cpp_extension

    import fcntl

    where = build_dir()
    where.mkdir(parents=True, exist_ok=True)
    # torch's own build lock (a `lock` file) stays behind when a build is killed, and every
    # later load then waits for it forever. Builds and loads take porter's lock instead: it
    # is a kernel lock, released when its process dies, and whoever holds it knows that any
    # `lock` file left in the folder belongs to no running build.
    with open(where / ".porter-lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        (where / "lock").unlink(missing_ok=True)
        # -O1: the kernels that matter are torch's own CPU kernels; our glue only needs to
        # be compiled quickly.
        return cpp_extension.load(NAME, [str(SOURCE)], build_directory=str(where), extra_cflags=["-O1"],
                                  verbose=verbose)
