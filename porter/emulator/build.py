"""Compile (once per environment) and load the emulator's C++ extension.

The build folder is keyed by what the build depends on (build_inputs): the source text,
the torch it compiles against (its folder and version: headers, libraries and C++ ABI
come from there), the compiler and the Python. The build records the paths of all of
them, so two virtual environments on one machine get a folder each instead of rebuilding
one folder over each other on every import. It lands in porter's user cache directory
(PORTER_EMULATOR_CACHE moves it), never in the source tree, and a second process finds it
there in milliseconds.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import sys
import sysconfig
from importlib.metadata import distributions
from pathlib import Path

from porter.core.datafiles import default_cache_dir

# One extension for every emulated target: the device's name is given at run time.
SOURCE = Path(__file__).with_name("csrc") / "privateuse1.cpp"
NAME = "porter_device_emulator"
# What a build folder holds besides the build: its inputs, for whoever finds the folder.
INPUTS_FILE = "porter-build.json"
_NO_TORCH = "the emulator needs torch: pip install 'cuda-porter[emulate]'"


def torch_location() -> Path:
    """The folder of the torch this interpreter imports, found without importing torch
    (porter's own process decides whether a build is needed; importing torch there would
    cost seconds)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(_NO_TORCH)
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def torch_version(location: Path | None = None) -> str:
    """The version of the torch installed at `location`, from the metadata beside it (a
    local tag such as +cpu names the build, and so its ABI)."""
    location = location or torch_location()
    for dist in distributions(name="torch", path=[str(location.parent)]):
        return dist.version
    raise RuntimeError(_NO_TORCH)


def compiler() -> str:
    """The C++ compiler torch.utils.cpp_extension will call (CXX, else c++), resolved
    through its links: an upgrade of the compiler changes the path (g++-12 -> g++-13)."""
    name = os.environ.get("CXX", "c++")
    found = shutil.which(name)
    return os.path.realpath(found) if found else name


def build_inputs() -> dict[str, str]:
    """Everything the compiled extension depends on besides its source."""
    location = torch_location()
    return {
        "torch": str(location),
        "torch_version": torch_version(location),
        "compiler": compiler(),
        "python": sys.implementation.cache_tag + " " + str(sysconfig.get_config_var("EXT_SUFFIX")),
        "python_include": sysconfig.get_paths()["include"],
    }


def cache_root() -> Path:
    return Path(os.environ.get("PORTER_EMULATOR_CACHE") or str(default_cache_dir() / "emulator"))


def build_dir(inputs: dict[str, str] | None = None) -> Path:
    inputs = build_inputs() if inputs is None else inputs
    text = SOURCE.read_bytes() + json.dumps(inputs, sort_keys=True).encode()
    return cache_root() / hashlib.sha256(text).hexdigest()[:16]


def is_built() -> bool:
    return (build_dir() / f"{NAME}.so").is_file()


def load_extension(verbose: bool = False):
    """The compiled module (building it the first time: about a minute on 2 cores)."""
    from torch.utils import cpp_extension

    import fcntl

    inputs = build_inputs()
    where = build_dir(inputs)
    where.mkdir(parents=True, exist_ok=True)
    # torch's own build lock (a `lock` file) stays behind when a build is killed, and every
    # later load then waits for it forever. Builds and loads take porter's lock instead: it
    # is a kernel lock, released when its process dies, and whoever holds it knows that any
    # `lock` file left in the folder belongs to no running build.
    with open(where / ".porter-lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        (where / "lock").unlink(missing_ok=True)
        # Built from a copy inside the folder: the folder is keyed by the source's bytes, and
        # the build records its source's path, so two checkouts of the same source (a
        # worktree, CI's clone) would otherwise rebuild over each other on every load.
        source = where / SOURCE.name
        text = SOURCE.read_bytes()
        if not source.is_file() or source.read_bytes() != text:
            source.write_bytes(text)
        record = where / INPUTS_FILE
        if not record.is_file():
            record.write_text(json.dumps(inputs, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        # -O1: the kernels that matter are torch's own CPU kernels; our glue only needs to
        # be compiled quickly.
        return cpp_extension.load(
            NAME, [str(source)], build_directory=str(where), extra_cflags=["-O1"], verbose=verbose
        )
