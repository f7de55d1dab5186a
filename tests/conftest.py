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
