"""The project's own pins, read once per run, the rules they make moot, and the words a rule
says where the project requires a distribution (`words_when_required`).

A rule may say `unless_pinned = "transformers>=5.4.0"`: it is off for a project whose own
requirements guarantee that release, and on wherever they admit an older one or do not name
the distribution (nothing is known then). The requirements are those at the root of the tree:
requirements.txt, `[project] dependencies` and optional-dependencies of pyproject.toml,
`install_requires` of setup.cfg and of setup.py (string literals, or a module-level list
passed there), and environment.yml (conda packages by their PyPI names, its `pip:` list). Only lower bounds
decide (`>=`, `>`, `==`, `~=`, `===`), and every place that names the distribution must
guarantee it: pip may install from any of them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from porter.core.toml import tomllib
from porter.rules import ActiveRules
from porter.rules.kinds import ConfigKeyParams

_CONDITION = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*>=\s*([0-9][0-9A-Za-z.+!-]*)\s*")
# A PEP 508 string: its name, extras, and the version specifiers up to a marker or URL.
_REQUIREMENT = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*\(?([^;@()]*)")
_MAX_BYTES = 1 << 20  # a pin file larger than this is not one


@dataclass(frozen=True)
class ProjectPins:
    """The project's requirements: (canonical distribution name, specifier as written)."""

    requirements: tuple[tuple[str, str], ...] = ()

    def guarantees(self, condition: str) -> bool:
        """Whether every place that names the distribution admits only releases >= the minimum."""
        name, minimum = parse_condition(condition)
        specifiers = [spec for dist, spec in self.requirements if dist == canonical(name)]
        if not specifiers:
            return False
        # Plain numeric releases (`>=4.55.0,<=5.8.0,!=4.57.0`, nearly every pin) are compared
        # here; anything else is PEP 440's business: the packaging library (~10 ms to load).
        plain = [_plain_lower_bound(spec) for spec in specifiers]
        least = _plain_release(minimum)
        if least is not None and None not in plain:
            return all(floor >= least for floor in plain)  # type: ignore[operator]
        from packaging.specifiers import InvalidSpecifier
        from packaging.version import InvalidVersion, Version

        try:
            return all(_lower_bound(spec) >= Version(minimum) for spec in specifiers)
        except (InvalidSpecifier, InvalidVersion):
            return False


def canonical(name: str) -> str:
    """PEP 503 normalisation (plain_requirement's, loaded once a pin is read)."""
    from porter.tables.plain_requirement import canonical_name

    return canonical_name(name)


def parse_condition(condition: str) -> tuple[str, str]:
    """(distribution, minimum release) of an `unless_pinned` condition `name>=X`; ValueError otherwise."""
    match = _CONDITION.fullmatch(condition)
    if match is None:
        raise ValueError(f"{condition!r} is not of the form 'distribution>=version'")
    return match.group(1), match.group(2)


_LOWER_BOUNDS = (">=", ">", "==", "~=", "===")


def _plain_release(version: str) -> tuple[int, ...] | None:
    """A release of digits and dots as PEP 440 compares it (4.55 == 4.55.0); None otherwise."""
    from porter.tables.plain_requirement import RELEASE

    if not re.fullmatch(RELEASE, version):
        return None
    release = [int(part) for part in version.split(".")]
    while release and release[-1] == 0:
        release.pop()
    return tuple(release)


def _plain_lower_bound(specifier: str) -> tuple[int, ...] | None:
    """`_lower_bound` of a specifier set whose clauses all name plain releases (read as
    porter/tables/plain_requirement.py reads them); None for any other (a pre-, post- or local
    version, a clause packaging would have to judge)."""
    if not specifier.strip():
        return ()
    # Loaded here, not with this module: a run whose pin files are unchanged reads none of them.
    from porter.tables.plain_requirement import parse_plain

    plain = parse_plain("x " + specifier)  # a specifier set is what follows a name
    if plain is None or plain.url is not None:
        return None
    floor: tuple[int, ...] = ()
    for spec in plain.specifier:
        release = _plain_release(spec.version.removesuffix(".*"))
        if release is None:
            return None
        if spec.operator in _LOWER_BOUNDS:
            floor = max(floor, release)
    return floor


def _lower_bound(specifier: str):
    """The least release a specifier set admits, as far as its lower bounds say (0 for none)."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    floor = Version("0")
    for spec in SpecifierSet(specifier):
        if spec.operator in (">=", ">", "==", "~=", "==="):
            floor = max(floor, Version(spec.version.removesuffix(".*")))
    return floor


PIN_FILES = ("requirements.txt", "pyproject.toml", "setup.cfg", "setup.py", "environment.yml")

Remember = Callable[[str, list[Path], Callable[[], list[str]]], list[str]]


def project_off(rules: ActiveRules, root: Path, remember: Remember | None = None) -> ActiveRules:
    """`rules` with the codes the project's pins make moot turned off (read only when a rule
    asks). `remember(key, files, decide)` may answer from an earlier run while the pin files
    are unchanged (porter/engine/tree_index.py): reading them costs the packaging library."""
    conditional = {r.code: pin for r in rules.rules if (pin := r.params.reporting.unless_pinned)}
    if not conditional:
        return rules

    def decide() -> list[str]:
        pins = read_pins(root, {canonical(parse_condition(pin)[0]) for pin in conditional.values()})
        return sorted(code for code, pin in conditional.items() if pins.guarantees(pin))

    key = "pins|" + ",".join(sorted(f"{code}:{pin}" for code, pin in conditional.items()))
    off = frozenset(remember(key, [root / name for name in PIN_FILES], decide) if remember else decide())
    return replace(rules, project_off=rules.project_off | off) if off else rules


def project_requires(rules: ActiveRules, root: Path, remember: Remember | None = None) -> ActiveRules:
    """`rules` told which of the distributions their `words_when_required` name the project's
    own requirements name (in any version): a ChatGLM repository requires cpm_kernels, and its
    quantization_bit runs them, not bitsandbytes. Read and remembered as `project_off`."""
    wanted = {
        canonical(name)
        for r in rules.rules
        if isinstance(r.params, ConfigKeyParams)
        for name in r.params.words_when_required
    }
    if not wanted:
        return rules

    def decide() -> list[str]:
        return sorted({name for name, _ in read_pins(root, wanted).requirements})

    key = "requires|" + ",".join(sorted(wanted))
    found = frozenset(remember(key, [root / name for name in PIN_FILES], decide) if remember else decide())
    return replace(rules, project_requires=found) if found else rules


def read_pins(root: Path, wanted: set[str]) -> ProjectPins:
    """What the requirements at the root of the tree say about the `wanted` distributions
    (canonical names); a file that names none of them is not even parsed, and unreadable or
    broken files say nothing."""
    spellings = {spelling for name in wanted for spelling in (name, name.replace("-", "_"), name.replace("-", "."))}
    found: list[tuple[str, str]] = []
    for reader, name in zip((_requirements_txt, _pyproject, _setup_cfg, _setup_py, _environment_yml), PIN_FILES):
        text = _text(root / name)
        if text is None or not any(spelling in text.lower() for spelling in spellings):
            continue
        try:
            strings = reader(text)
        except (
            ValueError,
            SyntaxError,
            RecursionError,
            ImportError,
        ):  # tomllib's, configparser's and yaml's errors are ValueErrors
            continue
        for string in strings:
            match = _REQUIREMENT.match(string)
            if match and canonical(match.group(1)) in wanted:
                found.append((canonical(match.group(1)), match.group(2).strip()))
    return ProjectPins(tuple(found))


def _text(path: Path) -> str | None:
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > _MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _requirements_txt(text: str) -> list[str]:
    lines = (re.sub(r"(^|\s)#.*", "", line).strip() for line in text.replace("\\\n", " ").splitlines())
    return [line for line in lines if line and not line.startswith("-")]


def _pyproject(text: str) -> list[str]:
    """`[project] dependencies` and every optional-dependencies group (`pip install .[train]`
    installs those pins as well)."""
    project = tomllib.loads(text).get("project", {})
    groups = project.get("optional-dependencies", {})
    lists = [project.get("dependencies", []), *(groups.values() if isinstance(groups, dict) else ())]
    return [d for deps in lists if isinstance(deps, list) for d in deps if isinstance(d, str)]


def _environment_yml(text: str) -> list[str]:
    """A conda environment's packages as PEP 508 strings (pytorch=2.0.1 -> torch==2.0.1.*) and its
    `pip:` list as it is."""
    import yaml

    from porter.filetypes.conda import pip_requirement

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from exc
    dependencies = data.get("dependencies", []) if isinstance(data, dict) else []
    out: list[str] = []
    for item in dependencies if isinstance(dependencies, list) else []:
        if isinstance(item, str):
            out.append(pip_requirement(item))
        elif isinstance(item, dict) and isinstance(item.get("pip"), list):
            out += [line for line in item["pip"] if isinstance(line, str) and not line.startswith("-")]
    return out


def _setup_cfg(text: str) -> list[str]:
    import configparser  # rarely needed: not on the start-up path

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise ValueError(str(exc)) from exc
    value = parser.get("options", "install_requires", fallback="")
    return [line.strip() for line in value.splitlines() if line.strip() and not line.strip().startswith("#")]


def _setup_py(text: str) -> list[str]:
    tree = ast.parse(text)
    assigned = {
        t.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    out: list[str] = []
    for node in ast.walk(tree):
        for keyword in getattr(node, "keywords", ()) if isinstance(node, ast.Call) else ():
            if keyword.arg != "install_requires":
                continue
            value = (
                assigned.get(keyword.value.id, keyword.value) if isinstance(keyword.value, ast.Name) else keyword.value
            )
            if isinstance(value, (ast.List, ast.Tuple)):
                out += [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return out
