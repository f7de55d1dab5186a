"""The one small interface every Python rule kind's matcher has (PythonKind).

A kind module ends with `KIND = PythonKind(...)`, naming its functions; porter/python/kinds/
__init__.py lists the kinds in the order they run. The kind's parameters class (what its rules
hold) is in porter/rules/kinds.py, where the loader validates rules without importing matchers;
a PythonKind whose name is not declared there fails at import. The other file types' kinds have
the generic interface of porter/rules/kinds.py (Matcher), which has no screen or finalizer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from porter.core.model import Finding
from porter.python.context import FileContext
from porter.rules import Rule
from porter.rules.kinds import declared

Screen = Callable[[list[Rule]], set[str]]
Find = Callable[[FileContext, list[Rule]], Iterable[Finding]]
Finalize = Callable[[FileContext, list[Rule], list[Finding]], list[Finding]]


@dataclass(frozen=True)
class PythonKind:
    """How one kind matches in a parsed module.

    `screen(rules)`: tokens whose absence from a file proves the kind cannot fire there (with
    `screens_imports`: top-level packages whose import the kind looks for). `find(ctx, rules)`
    matches, once per file; `finalize(ctx, rules, findings)` runs after every kind has matched,
    for kinds that decide on the other kinds' edits (device guards, import insertion).

    A module too large to analyse whole is analysed in groups of statements
    (porter/python/grouped.py): `find` and `finalize` run per group, on the group's own nodes
    (FileContext.own_nodes) with the rest of the module as a skeleton. A kind that decides for
    the whole module from every finding says so: `whole_module` (its finalize runs once, at the
    end), or `settle(ctx, rules, findings)`, run once with every group's findings, for what its
    `find` decided from the other groups' too (what it records in FileContext.across_groups).
    """

    name: str
    screen: Screen
    screens_imports: bool = False
    find: Find | None = None
    finalize: Finalize | None = None
    whole_module: bool = False
    settle: Finalize | None = None

    def __post_init__(self) -> None:
        declared(self.name)
