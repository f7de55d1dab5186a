"""jinja2 environments for porter's templates, with a bytecode cache.

Compiling the report and LoRA templates costs ~0.2 s per run; the compiled code is cached
in the user cache directory (like __pycache__: keyed by template source, safe to delete).
A cache that cannot be read or written is skipped (porter/core/cache_writes.py): the
templates are compiled again, the run goes on.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2

from porter.core.cache_writes import cache_write


class _SkippingCache(jinja2.FileSystemBytecodeCache):
    """jinja's cache of compiled templates, whose failed reads and writes cost only time
    (jinja's own raises: a full disk stopped the run with "No space left on device")."""

    def __init__(self, folder: Path) -> None:
        super().__init__(str(folder))
        self.folder = folder

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError:
            bucket.reset()  # compiled again

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        cache_write(self.folder, lambda: super(_SkippingCache, self).dump_bytecode(bucket))


@lru_cache(maxsize=None)
def _bytecode_cache() -> jinja2.BytecodeCache | None:
    from porter.core.datafiles import user_cache_dir

    cache = user_cache_dir()
    if cache is None:  # --no-cache
        return None
    folder = cache / "jinja"
    if not cache_write(folder, lambda: folder.mkdir(parents=True, exist_ok=True)):
        return None
    return _SkippingCache(folder)


def environment(package_path: str, **options) -> jinja2.Environment:
    """An Environment over `porter/<package_path>` templates."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("porter", package_path),
        bytecode_cache=_bytecode_cache(),
        **options,
    )
