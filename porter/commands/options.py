"""Options shared by several commands, defined once."""

from __future__ import annotations

from pathlib import Path

import click

cache_dir_option = click.option(
    "--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Per-file result cache (default: the user cache directory).",
)
no_cache_option = click.option("--no-cache", is_flag=True, help="Do not read or write the cache.")


def cache_options(command):
    """--cache-dir and --no-cache."""
    return cache_dir_option(no_cache_option(command))


def chosen_cache_dir(cache_dir: Path | None, no_cache: bool) -> Path | None:
    from porter.core.datafiles import default_cache_dir

    return None if no_cache else (cache_dir or default_cache_dir())
