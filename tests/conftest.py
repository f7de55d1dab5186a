import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory):
    """Commands that cache by default (convert, check) use a cache of this test session,
    never the user's: results must not leak between runs or from the developer's machine."""
    import os

    saved = os.environ.get("XDG_CACHE_HOME")
    # The emulator's compiled extension is keyed by what it is built from (its source, torch's
    # folder and version, the compiler, Python: porter/emulator/build.py), so it
    # cannot leak results; sharing the user's build saves a minute per session.
    from porter.core.datafiles import default_cache_dir

    os.environ.setdefault("PORTER_EMULATOR_CACHE", str(default_cache_dir() / "emulator"))
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if saved is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = saved


# LLaMA-Factory's source as the package index has it (the 0.9.5 sdist holds the repository:
# src/, examples/, data/, docker/, scripts/): the checks on a real repository run in a clone
# without fetched code in the project. PORTER_LF names a checkout to use instead.
LLAMA_FACTORY_SDIST = "llamafactory==0.9.5"


@pytest.fixture(scope="session")
def llama_factory(tmp_path_factory) -> Path:
    import os
    import subprocess
    import tarfile

    given = os.environ.get("PORTER_LF")
    if given:
        return Path(given)
    where = tmp_path_factory.mktemp("llama-factory")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--dest",
            str(where),
            LLAMA_FACTORY_SDIST,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    archives = sorted(where.glob("*.tar.gz"))
    if proc.returncode != 0 or not archives:
        pytest.skip(
            f"needs LLaMA-Factory's source: the package index did not give {LLAMA_FACTORY_SDIST} "
            f"({proc.stderr.strip().splitlines()[-1:] or 'no archive'}); set PORTER_LF to a checkout"
        )
    with tarfile.open(archives[0]) as archive:
        archive.extractall(where, filter="data")
    (root,) = [p for p in where.iterdir() if p.is_dir()]
    return root
