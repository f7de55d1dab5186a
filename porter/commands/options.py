"""Options and option parsing shared by several commands, defined once."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from porter.core.limits import MAX_FILE_MB
from porter.core.terminal import printable
from porter.rules import TARGETS
from porter.rules.terms import TARGET_HELP

# -h as well as --help. Set on the group and on each command: click keeps a command's help
# option from the first context that asks, and a command run on its own (a test) has no group.
HELP = {"help_option_names": ["-h", "--help"]}


class FiniteFloatRange(click.FloatRange):
    """A FloatRange that refuses nan and inf, which every comparison of a range lets through."""

    def convert(self, value, param, ctx):
        import math

        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


NO_TARGET = (
    f"no target: pass --target {'|'.join(TARGETS)}, or set `target` in [tool.porter] (pyproject.toml) or porter.toml"
)

target_option = click.option(
    "--target",
    "-t",
    type=click.Choice(TARGETS),
    required=True,
    help=f"{TARGET_HELP}.",
)
version_option = click.option(
    "--target-version",
    "version",
    default=None,
    help="torch_mlu line for --target mlu (e.g. 2.1, 2.4); default: the newest.",
)
max_file_size_option = click.option(
    "--max-file-size",
    "max_mb",
    type=FiniteFloatRange(min=0),
    default=float(MAX_FILE_MB),
    show_default=True,
    help="Files larger than this many MB are skipped, reported as such (convert copies them as they are); 0: no limit.",
)
jobs_option = click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=0),
    default=None,
    help="Worker processes (default, or 0: all cores; 1: no worker processes).",
)
ignore_option = click.option(
    "--ignore", default=None, help="Skip rules whose code starts with one of these (comma-separated)."
)
exclude_option = click.option(
    "--exclude",
    multiple=True,
    help="Leave out files and folders matching this gitignore-style pattern (repeatable; replaces the configured exclude).",
)
extend_exclude_option = click.option(
    "--extend-exclude", multiple=True, help="Like --exclude, in addition to the configured exclude."
)
cache_dir_option = click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Per-file result cache (default: the user cache directory).",
)
no_cache_option = click.option("--no-cache", is_flag=True, help="Do not read or write the cache.")


def cache_options(command):
    """--cache-dir and --no-cache."""
    return cache_dir_option(no_cache_option(command))


def exclude_options(command):
    """--exclude and --extend-exclude: which files check scans and convert converts."""
    return exclude_option(extend_exclude_option(command))


def chosen_cache_dir(cache_dir: Path | None, no_cache: bool) -> Path | None:
    from porter.core.datafiles import default_cache_dir

    return None if no_cache else (cache_dir or default_cache_dir())


def codes(value: str | None, option: str | None = None, validate: bool = True) -> tuple[str, ...]:
    """Comma-separated rule codes (or prefixes) of --select / --ignore; a code no rule has is
    a usage error (exit 2), never a selection that silently matches nothing. (`validate`
    False: the caller checks them, knowing the project's own rules too.)"""
    found = tuple(c.strip() for c in (value or "").split(",") if c.strip())
    if found and validate:
        from porter.config import unknown_code_message, unknown_codes

        bad = unknown_codes(found)
        if bad:
            raise click.BadParameter(unknown_code_message(bad[0]), param_hint=option)
    return found


@contextmanager
def usage_errors() -> Iterator[None]:
    """A run that names no target, or a torch line its target has no table for, is a usage
    error (exit 2), said in the command line's words."""
    from porter.config import NoTarget, UnknownVersion

    try:
        yield
    except NoTarget:
        raise click.UsageError(NO_TARGET) from None
    except UnknownVersion as exc:
        raise click.BadParameter(str(exc), param_hint="--target-version") from None


def config_options(command):
    """--config FILE, --isolated and --show-settings: where settings come from."""
    command = click.option(
        "--show-settings", is_flag=True, help="Print the resolved settings and where each came from, and exit."
    )(command)
    command = click.option("--isolated", is_flag=True, help="Ignore every configuration file.")(command)
    return click.option(
        "--config",
        "config",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        default=None,
        help="Read this configuration file (porter.toml or pyproject.toml) instead of looking for one.",
    )(command)


def settings_text(settings, start: Path) -> str:
    """`porter config`: each setting as TOML, with where it came from."""
    import json

    where = settings.config.label if settings.config else "no configuration file (defaults and options)"
    lines = [f"# settings for {start}: {where}"]
    for key, value, source in settings.rows():
        if isinstance(value, dict):
            text = (
                "{ " + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in value.items()) + " }"
                if value
                else "{}"
            )
        elif value is None:
            lines.append(f"# {key} is not set")
            continue
        else:
            text = json.dumps(value)
        lines.append(f"{key} = {text}".ljust(48) + f"  # {source}")
    return printable("\n".join(lines), lines=True) + "\n"  # a path or pattern may hold anything
