"""Project configuration: `[tool.porter]` in pyproject.toml, or porter.toml, as ruff reads its own.

The file is found by walking up from SRC (or from the first file argument): in each folder
`porter.toml` wins over `pyproject.toml`, and a pyproject.toml without a `[tool.porter]`
table is passed over. Keys (kebab-case, as ruff's):

    target = "mlu"                       # or "hip"
    target-version = "2.4"               # a torch_mlu line
    select = ["PRT1", "PRT9"]            # code prefixes; default: every rule
    extend-select = ["PRT003"]           # added to select (or to the default)
    ignore = ["PRT903"]
    per-file-ignores = { "tests/**" = ["PRT9"] }
    exclude = ["third_party/**"]         # gitignore-style patterns, relative to the file
    extend-exclude = ["*.ipynb"]
    respect-gitignore = true
    baseline = "porter-baseline.json"    # relative to the file
    fail-on = "error"                    # or "warning"
    rules = ["porter_rules/*.toml"]      # the project's own rules, as porter's rules/
    codemods = ["porter_rules/*.py"]     # the project's libcst codemods (the `codemods` extra)

Anything else, a value of the wrong type, or a code no rule has is a `ConfigError` that
names the file and the key. Command-line options override the file; `Settings.sources` says
where each value came from (`porter config` prints it).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from porter.core.fileset import FileSelection, explicit_files
from porter.core.toml import tomllib
from porter.rules import TARGETS

CONFIG_NAMES = ("porter.toml", "pyproject.toml")
FAIL_ON = ("error", "warning")
DEFAULT = "default"
COMMAND_LINE = "command line"


class ConfigError(ValueError):
    """A configuration file or option is wrong; the message names the file and the key."""


def _list_of_str(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


# key -> (check, what it must be)
_KEYS: dict[str, tuple[Any, str]] = {
    "target": (lambda v: v in TARGETS, f"one of {', '.join(map(repr, TARGETS))}"),
    "target-version": (lambda v: isinstance(v, str), 'a string such as "2.4"'),
    "select": (_list_of_str, "a list of rule codes"),
    "extend-select": (_list_of_str, "a list of rule codes"),
    "ignore": (_list_of_str, "a list of rule codes"),
    "per-file-ignores": (
        lambda v: isinstance(v, dict) and all(_list_of_str(c) for c in v.values()),
        "a table of glob = [rule codes]",
    ),
    "exclude": (_list_of_str, "a list of glob patterns"),
    "extend-exclude": (_list_of_str, "a list of glob patterns"),
    "respect-gitignore": (lambda v: isinstance(v, bool), "true or false"),
    "baseline": (lambda v: isinstance(v, str) and v.strip() != "", "a path (a non-empty string)"),
    "fail-on": (lambda v: v in FAIL_ON, '"error" or "warning"'),
    "rules": (_list_of_str, "a list of paths or glob patterns of rule files"),
    "codemods": (_list_of_str, "a list of paths or glob patterns of codemod files (.py)"),
}
_CODE_KEYS = ("select", "extend-select", "ignore")


@dataclass(frozen=True)
class ConfigFile:
    """A configuration file found for a tree and its validated `[tool.porter]` table."""

    path: Path
    table: dict[str, Any]

    @property
    def label(self) -> str:
        return f"{self.path} [tool.porter]" if self.path.name == "pyproject.toml" else str(self.path)

    @property
    def root(self) -> Path:
        return self.path.parent


@dataclass(frozen=True)
class Settings:
    """The resolved settings of a run; `sources[key]` says where each came from."""

    target: str | None = None
    target_version: str | None = None
    select: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    baseline: Path | None = None
    fail_on: str = "error"
    rules: tuple[Path, ...] = ()
    codemods: tuple[Path, ...] = ()
    config: ConfigFile | None = None
    root: Path | None = None  # the folder of the configuration file: patterns are relative to it
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def project_rules(self) -> tuple[Path, ...]:
        """The project's own rule files: TOML rules, then codemods (what `load_rules` takes)."""
        return self.rules + self.codemods

    def source(self, key: str) -> str:
        return self.sources.get(key, DEFAULT)

    def rows(self) -> list[tuple[str, Any, str]]:
        """(key as in the file, value, where it came from) for every setting."""
        out = []
        for key in _KEYS:
            value = getattr(self, key.replace("-", "_"))
            if key == "per-file-ignores":
                value = {glob: list(c) for glob, c in value}
            elif isinstance(value, tuple):
                value = [str(v) for v in value]
            elif isinstance(value, Path):
                value = str(value)
            out.append((key, value, self.source(key)))
        return out


def find_config(start: Path) -> Path | None:
    """The nearest porter.toml, or pyproject.toml with a [tool.porter] table, at or above `start`."""
    folder = start.resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        for name in CONFIG_NAMES:
            path = candidate / name
            if path.is_file() and (name == "porter.toml" or _has_porter_table(path)):
                return path
    return None


def _has_porter_table(path: Path) -> bool:
    try:
        raw = path.read_bytes()
    except OSError:
        return False
    if b"tool.porter" not in raw and b"[tool]" not in raw and b"tool = " not in raw:
        return False  # the cheap answer for most pyproject files
    data = _parse(path, raw)
    tool = data.get("tool")
    return isinstance(tool, dict) and "porter" in tool


def _parse(path: Path, raw: bytes) -> dict:
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc


def read_config(path: Path) -> ConfigFile:
    """Read and validate one configuration file (porter.toml, or a pyproject's [tool.porter])."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    data = _parse(path, raw)
    if path.name == "pyproject.toml":
        tool = data.get("tool")
        table = tool.get("porter", {}) if isinstance(tool, dict) else {}
        where = f"{path} [tool.porter]"
    else:
        table, where = data, str(path)
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    for key, value in table.items():
        if key not in _KEYS:
            hint = f" (did you mean '{key.replace('_', '-')}'?)" if key.replace("_", "-") in _KEYS else ""
            raise ConfigError(f"{where}: unknown key '{key}'{hint} (known: {', '.join(_KEYS)})")
        check, what = _KEYS[key]
        if not check(value):
            raise ConfigError(f"{where}: key '{key}' must be {what}, got {value!r}")
    extra: tuple[str, ...] = ()
    own = tuple(_rule_files(path.resolve().parent, table["rules"], where)) if "rules" in table else ()
    if "codemods" in table:
        own += tuple(_rule_files(path.resolve().parent, table["codemods"], where, "codemods"))
    if own:
        extra = project_codes(own)
    for key in _CODE_KEYS:
        for code in table.get(key, ()):
            _check_code(code, f"{where}: key '{key}'", extra)
    for glob, codes in table.get("per-file-ignores", {}).items():
        for code in codes:
            _check_code(code, f"{where}: key 'per-file-ignores' ({glob!r})", extra)
    if "target-version" in table:
        _check_version(table.get("target"), table["target-version"], f"{where}: key 'target-version'")
    return ConfigFile(path.resolve(), table)


def known_codes(extra: tuple[str, ...] = ()) -> frozenset[str]:
    """Every code a rule of porter has, for any target (and `extra`: a project's own rules)."""
    from porter.rules import known_codes as porter_codes

    return porter_codes() | frozenset(extra)


def unknown_codes(codes: tuple[str, ...] | list[str], extra: tuple[str, ...] = ()) -> list[str]:
    """The codes (or code prefixes) no rule has."""
    known = known_codes(extra)
    return [c for c in codes if c != "ALL" and (not any(k.startswith(c) for k in known) or not c.startswith("PRT"))]


def project_codes(files: tuple[Path, ...]) -> tuple[str, ...]:
    """The codes of a repository's own rule files, validated as porter's rules are (for every
    target). Raises ConfigError naming the file and the key."""
    if not files:
        return ()
    from porter.rules import RuleError, load_rules

    codes: set[str] = set()
    for target in TARGETS:
        try:
            rules = load_rules(target, files)
        except RuleError as exc:
            raise ConfigError(str(exc)) from exc
        codes |= {r.code for r in rules.rules}
    return tuple(sorted(codes))


def unknown_code_message(code: str, extra: tuple[str, ...] = ()) -> str:
    """What is said of a code no rule has, with the codes it was probably meant to be."""
    from porter.core.suggest import closest_codes, did_you_mean

    hint = did_you_mean(closest_codes(code, known_codes(extra)))
    return f"unknown rule code {code!r} ({hint + ' ' if hint else ''}see `porter rules` for the list)"


def _check_code(code: str, where: str, extra: tuple[str, ...] = ()) -> None:
    if unknown_codes([code], extra):
        raise ConfigError(f"{where}: {unknown_code_message(code, extra)}")


def _check_version(target: str | None, version: str, where: str) -> None:
    targets = [target] if target is not None and target in TARGETS else [t for t in TARGETS]
    known = sorted({v for t in targets for v in known_versions(t)})
    if version not in known:
        raise ConfigError(f"{where}: {version!r} is not a known version (known: {', '.join(known) or 'none'})")


class NoTarget(ConfigError):
    """Neither an option nor the configuration names the target."""


class UnknownVersion(ConfigError):
    """The torch line asked for has no table for the run's target."""


def required_target(settings: Settings) -> str:
    """The target of a run; the one place that says there is none (the command line says it
    in its own words: commands/options.py)."""
    if settings.target is None:
        raise NoTarget(
            f"no target: pass target={' or '.join(map(repr, TARGETS))}, or set `target` in [tool.porter] "
            "(pyproject.toml) or porter.toml"
        )
    return settings.target


def known_versions(target: str) -> list[str]:
    """The torch lines with a table of their own for `target`, oldest first (none for HIP,
    whose one table serves every release)."""
    from porter.tables.versions import ANY_VERSION, available_versions

    return [v for v in available_versions(target) if v != ANY_VERSION]


def target_version(target: str, asked: str | None) -> str | None:
    """The torch line a run uses: `asked`, else the newest with a table (None where the
    target has one table for every release). The configured line goes with the configured
    target only: asked for another target, it is an UnknownVersion."""
    versions = known_versions(target)
    if asked is None:
        return versions[-1] if versions else None
    if asked not in versions:
        raise UnknownVersion(f"{asked} is not a known version for {target} (known: {', '.join(versions) or 'none'})")
    return asked


def load_settings(start: Path, config: Path | None = None, isolated: bool = False) -> Settings:
    """The settings from the configuration file for `start` (or `config`), without options."""
    if isolated:
        return Settings()
    path = config if config is not None else find_config(start)
    if path is None:
        return Settings()
    cfg = read_config(path)
    t = cfg.table
    label = cfg.label
    values: dict[str, Any] = {"config": cfg, "root": cfg.root}
    for key, value in t.items():
        attr = key.replace("-", "_")
        if key == "per-file-ignores":
            value = tuple((glob, tuple(codes)) for glob, codes in value.items())
        elif key == "baseline":
            value = cfg.root / value
        elif key == "rules":
            value = tuple(_rule_files(cfg.root, value, label))
        elif key == "codemods":
            value = tuple(_rule_files(cfg.root, value, label, "codemods"))
        elif isinstance(value, list):
            value = tuple(value)
        values[attr] = value
    return Settings(**values, sources={key: label for key in t})


def project_rule_files(start: Path, config: Path | None = None, isolated: bool = False) -> tuple[Path, ...]:
    """The project's own rule and codemod files for `start` (as check finds its configuration)."""
    return load_settings(start, config, isolated).project_rules


def _rule_files(root: Path, patterns: list[str], where: str, key: str = "rules") -> list[Path]:
    """The files `patterns` name under `root`. Codemods (key "codemods") need libcst: without
    it, naming one is an error that says how to install it."""
    found: list[Path] = []
    for pattern in patterns:
        matches = sorted(root.glob(pattern)) if any(ch in pattern for ch in "*?[") else [root / pattern]
        matches = [m for m in matches if m.is_file()]
        if not matches:
            raise ConfigError(f"{where}: key '{key}': {pattern!r} matches no file under {root}")
        wrong = [m for m in matches if (m.suffix != ".py") == (key == "codemods")]
        if wrong:  # each key one language: a codemod among TOML rules would not parse, and back
            raise ConfigError(
                f"{where}: key '{key}': {wrong[0]} "
                + ("is not a Python file (.py)" if key == "codemods" else "is a Python file: codemods go in 'codemods'")
            )
        found.extend(m for m in matches if m not in found)
    if key == "codemods" and found:
        _need_libcst(found[0], where)
    return found


def _need_libcst(codemod: Path, where: str) -> None:
    try:
        import libcst.codemod  # noqa: F401  (only when a configuration names codemods)
    except ImportError as exc:
        from porter.rules.codemods import INSTALL_HINT

        raise ConfigError(
            f"{where}: key 'codemods': {codemod} is a libcst codemod, and libcst cannot be imported "
            f"({exc}): {INSTALL_HINT}"
        ) from exc


def with_options(settings: Settings, **options: Any) -> Settings:
    """`settings` with the command-line options that were given (None: not given).

    As ruff: `select` replaces the file's select and extend-select; `extend_select`, `ignore`,
    `extend_exclude` and `per_file_ignores` add to the file's; the others (`exclude` too) replace.
    """
    changes: dict[str, Any] = {}
    sources = dict(settings.sources)
    for attr, value in options.items():
        if value is None or value == () and attr != "select":
            continue
        key = attr.replace("_", "-")
        if attr == "select":
            if value == ():
                continue
            changes["extend_select"] = ()
            sources.pop("extend-select", None)
        elif attr in ("extend_select", "ignore", "extend_exclude", "per_file_ignores"):
            value = tuple(getattr(settings, attr)) + tuple(value)
            if settings.source(key) != DEFAULT:
                sources[key] = f"{settings.source(key)} + {COMMAND_LINE}"
                changes[attr] = value
                continue
        for code in value if attr in ("select", "extend_select", "ignore") else ():
            extra = project_codes(settings.project_rules)
            if unknown_codes([code], extra):
                raise ConfigError(f"--{key}: {unknown_code_message(code, extra)}")
        changes[attr] = value
        sources[key] = COMMAND_LINE
    if "target_version" in changes:
        _check_version(changes.get("target", settings.target), changes["target_version"], "--target-version")
    return replace(settings, **changes, sources=sources)


def _codes(value: str | Iterable[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = value.split(",")
    return tuple(c.strip() for c in value if c.strip())


def settings_for(start: str | os.PathLike, config: bool | str | os.PathLike = True, **options) -> Settings:
    """The configuration found for `start` (or `config`, or none with config=False), with
    `options` (None: not given) over it. Raises ConfigError."""
    isolated = config is False
    path = None if isinstance(config, bool) else Path(config)
    if path is not None and not path.is_file():
        raise ConfigError(f"{path}: no such configuration file")
    for key in ("select", "extend_select", "ignore"):
        if key in options:
            options[key] = _codes(options[key]) or ()
    for key in ("exclude", "extend_exclude"):
        if options.get(key) is not None:
            options[key] = (options[key],) if isinstance(options[key], str) else tuple(options[key])
    if options.get("baseline") is not None:
        options["baseline"] = Path(options["baseline"])
    return with_options(load_settings(Path(start), path, isolated), **options)


def file_selection(
    paths: Sequence[Path], settings: Settings, force_exclude: bool = False
) -> tuple[Path, FileSelection]:
    """(tree, FileSelection) for `paths`: one folder is the tree; files (as pre-commit passes
    them) are checked alone, relative to the project's root (the configuration file's
    folder, else the working directory)."""
    selection = FileSelection(
        tuple(settings.exclude) + tuple(settings.extend_exclude),
        settings.respect_gitignore,
        tuple(settings.per_file_ignores),
        settings.root,
        None,
        force_exclude,
    )
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise FileNotFoundError(f"no such file or folder: {missing[0]}")
    if len(paths) == 1 and paths[0].is_dir():
        return paths[0], selection
    resolved = [p.resolve() for p in paths]
    for candidate in (settings.root, Path.cwd()):
        if candidate is not None and all(p.is_relative_to(candidate.resolve()) for p in resolved):
            root = candidate
            break
    else:
        root = Path(os.path.commonpath([p if p.is_dir() else p.parent for p in resolved]))
    if root.resolve() == Path.cwd().resolve():
        root = Path(".")
    return root, replace(selection, only=explicit_files(root, selection, list(paths)))
