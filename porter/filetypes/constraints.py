"""porter_report/requirements-<target>.txt: a pip constraints file for the target container.

Derived from two things only: the releases that work on the target line (the package table's
`releases`, each with its source) and the repository's own pins at the root of the tree
(requirements.txt, pyproject.toml, setup.cfg, setup.py, environment.yml: filetypes/pins.py). Per distribution
the table knows: the repository's range where it holds only working releases; its range with
the floor raised where it admits older ones; the table's range, with a comment naming the
repository's pin, where the pin excludes every working release. `pip install -r
requirements.txt -c porter_report/requirements-mlu.txt` then cannot pick a release that does
not know the target, and a constraint installs nothing by itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from porter.filetypes.pins import PIN_FILES, read_pins
from porter.rules.terms import TARGET_NAMES
from porter.tables.packages import load_package_table
from porter.tables.requirement_policy import merged_range, releases_check, without_local_labels

# How the file is derived, as the reports say it (report.json's constraints.derived).
DERIVATION = (
    "Each distribution porter's package table bounds on this line: the repository's own pin where it "
    "holds only working releases, its range with the floor raised where it admits older ones, the "
    "table's range where the pin excludes them all; pins are read from requirements.txt, "
    "pyproject.toml (optional dependencies too), setup.cfg, setup.py and environment.yml "
    "at the root of the tree."
)


@dataclass(frozen=True)
class Constraint:
    name: str  # the distribution
    specifier: str | None  # None: nothing to constrain, only a comment (a distribution the target cannot use)
    why: str  # how it was derived, one line
    source: str | None = None  # where the table's bound comes from
    pinned: str | None = None  # the repository's own specifier, where it has one

    def plain(self) -> dict:
        return {k: v for k, v in vars(self).items() if v is not None}


def constraints_file_name(target: str) -> str:
    return f"requirements-{target}.txt"


def derive_constraints(root: Path, target: str, line: str | None) -> list[Constraint]:
    """One constraint per distribution the table bounds on `line`, and a comment for each one
    the repository requires that the target replaces or cannot run."""
    table = load_package_table(target).for_line(line)
    bounded = {name: entry for name, entry in table.entries.items() if entry.releases(line)}
    named = {name for name, entry in table.entries.items() if entry.action in ("drop", "replace")}
    pins = read_pins(root, set(bounded) | named)
    written: dict[str, list[str]] = {}
    for name, spec in pins.requirements:
        written.setdefault(name, [])
        if spec:
            written[name].append(without_local_labels(spec))
    out: list[Constraint] = []
    for name, entry in sorted(bounded.items()):
        if entry.action in ("drop", "replace"):
            continue
        working = entry.releases(line) or ""
        mine = ",".join(written.get(name, []))
        why, source = entry.releases_why or "", entry.releases_source
        if not mine:
            out.append(Constraint(name, working, f"the releases that work on the target: {why}", source))
            continue
        check = releases_check(mine, working)
        if check is None and working.startswith("=="):
            out.append(
                Constraint(
                    name,
                    working,
                    f"the exact release of the line, which the repository's {name}{mine} admits: {why}",
                    source,
                    mine,
                )
            )
        elif check is None:
            out.append(
                Constraint(
                    name,
                    _narrowed(mine, working),
                    f"the repository's {name}{mine} within the releases that work: {why}",
                    source,
                    mine,
                )
            )
        elif check[0] == "releases-admitted":
            out.append(Constraint(name, check[1], f"the repository's range with its floor raised: {why}", source, mine))
        else:
            out.append(
                Constraint(
                    name,
                    working,
                    f"the repository's pin {name}{mine} excludes every working release (PRT421): {why}",
                    source,
                    mine,
                )
            )
    for name in sorted(named):
        if name not in written:
            continue
        entry = table.entries[name]
        if entry.action == "replace":
            why = f"install {entry.replacement} instead (the import name stays): {entry.reason}"
        else:
            why = f"not installable on the target: {entry.reason}"
        out.append(Constraint(name, None, why, entry.source, ",".join(written[name]) or None))
    return out


def _narrowed(mine: str, working: str) -> str:
    """The repository's range within the working one."""
    from packaging.specifiers import SpecifierSet

    return merged_range(SpecifierSet(mine), SpecifierSet(working))


def render_constraints(constraints: list[Constraint], target: str, line: str | None) -> str:
    name = TARGET_NAMES.get(target, target)
    on = f"{name}, torch {line} line" if line and line != "any" else name
    lines = [
        f"# porter: constraints for {on}.",
        f"# On the target container: pip install -r requirements.txt -c porter_report/{constraints_file_name(target)}",
        "# Each line: the releases that work on the target (porter's package table, with its source),",
        f"# narrowed by the repository's own pins ({', '.join(PIN_FILES)} at the root of the tree).",
        "# A constraint installs nothing by itself; it only stops pip from choosing a release that does not work.",
        "",
    ]
    for c in constraints:
        source = f" [{c.source}]" if c.source else ""
        if c.specifier is None:  # said, not constrained: a constraint cannot keep a package out
            pinned = f" (the repository requires {c.name}{c.pinned or ''})"
            lines.append(f"# {c.name}{pinned}: {c.why}{source}".replace("\n", " "))
        else:
            lines += [f"# {c.why}{source}".replace("\n", " "), f"{c.name}{c.specifier}"]
    return "\n".join(lines) + "\n"
