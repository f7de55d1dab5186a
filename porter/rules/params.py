"""Typed rule parameters: the base of every kind's parameters class, and how a field is declared.

A kind's rules carry their kind-specific TOML keys as one frozen object of the kind's class
(porter/rules/kinds.py declares one per kind). Each field says, besides the Python type the
matcher reads, what the TOML value must be and hold; the loader (porter/rules/load.py)
validates a rule's table against them and builds the object. Code reads
`QualifiedNameParams.of(rule).match`, never `params["match"]`: a misspelt field is an error for
mypy and at import, not a silent None.

The classes are built by `Params.__init_subclass__`, not by `dataclasses`: every command that
loads rules imports all of them, and dataclasses' generated methods cost ~15 ms there (a
third of a warm `porter check`). `dataclass_transform` tells type checkers they behave as
frozen, keyword-only dataclasses, which they are.

TOML arrays become tuples (the object is frozen and shared by every file's run); tables stay
dicts, read-only by convention (typed `Mapping`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: object) -> Callable[[type], type]:
        return lambda cls: cls


P = TypeVar("P", bound="Params")


@dataclass(frozen=True)
class Field:
    """What a field's TOML value must be: its TOML type and, for a list/str/dict, the values it may hold."""

    type: type
    choices: tuple[str, ...] = ()  # for a list: each item; for a dict: each value; for a str: itself
    keys_in: tuple[str, ...] = ()  # for a dict: each key
    rule_of_kind: str | None = None  # a str that names another rule (by code) of this kind
    regex: bool = False  # for a list: each item is a regular expression (checked when the rules load)


_REQUIRED = object()  # the default of a field a rule must give


class _Declared:
    """A field as its class declares it (what `strings()`, `text()`, ... return)."""

    __slots__ = ("spec", "default", "empty", "key")

    def __init__(
        self,
        spec: Field,
        default: Any = _REQUIRED,
        empty: Callable[[], Any] | None = None,  # makes the default where it must not be shared (a dict)
        key: str | None = None,  # the TOML key, where it is not the Python name (`class`)
    ) -> None:
        self.spec, self.default, self.empty, self.key = spec, default, empty, key


def strings(
    *, required: bool = False, choices: tuple[str, ...] = (), regex: bool = False, absent: tuple | None = ()
) -> Any:
    """A TOML array (a tuple; `absent` when not given: empty, or None where "not given" and
    "empty" differ)."""
    return _Declared(Field(list, choices=choices, regex=regex), _REQUIRED if required else absent)


def text(
    *,
    required: bool = False,
    default: str | None = None,
    choices: tuple[str, ...] = (),
    rule_of_kind: str | None = None,
    key: str | None = None,
) -> Any:
    """A TOML string (None when absent, unless a default is given)."""
    spec = Field(str, choices=choices, rule_of_kind=rule_of_kind)
    return _Declared(spec, _REQUIRED if required else default, key=key)


def switch() -> Any:
    """A TOML boolean (False when absent)."""
    return _Declared(Field(bool), False)


def table(*, required: bool = False, choices: tuple[str, ...] = (), keys_in: tuple[str, ...] = ()) -> Any:
    """A TOML table (a dict, read-only by convention; an empty one when absent)."""
    spec = Field(dict, choices=choices, keys_in=keys_in)
    return _Declared(spec, _REQUIRED) if required else _Declared(spec, None, empty=dict)


@dataclass(frozen=True)
class Reporting:
    """How a rule's findings are reported, whatever its kind: the few general options a kind may
    declare as fields of its parameters class (a kind that does not declare one has its default).
    One stage applies them all (porter/engine/reporting.py and the Python pipeline's per-file
    pass, porter/python/reporting.py)."""

    once_per_file: bool = False  # the rule's findings in one file are one thing to act on
    once_per_line: bool = False  # ... those on one line are (the torch family in one `pip install`)
    once_per_subject: bool = False  # ... those of one subject in one file are (a variable set twice)
    once_per_folder: bool = False  # the same finding in every file of a folder is one
    once_per_tree: bool = False  # the same advice about the environment in many files is one
    # One finding per subject (a library, a setting) for the whole tree: "warnings" or "errors-too".
    once_per_subject_in_tree: str | None = None
    note_in_tests: bool = False  # inside a `test_*` function, a note
    covered_by: str | None = None  # the code of the rule that reports the call this argument is in
    one_decision: str | None = None  # findings of rules of one decision: once per function
    unless_pinned: str | None = None  # off where the project's pins guarantee this requirement
    opt_in: bool = False  # runs only when --select names its code

    @classmethod
    def of(cls, params: Params) -> Reporting:
        given = {f.name: getattr(params, f.name) for f in dataclasses.fields(cls) if hasattr(params, f.name)}
        return cls(**given) if given else _NO_OPTIONS


@dataclass_transform(kw_only_default=True, frozen_default=True)
class Params:
    """The parameters of a rule of one kind; each kind subclasses it (porter/rules/kinds.py),
    declaring each field as `name: type = strings(...)` (or text, switch, table)."""

    # Each subclass's fields: Python name -> how it is declared, in declaration order, and
    # TOML key -> (Python name, Field) as the loader reads them.
    _declared: ClassVar[dict[str, _Declared]] = {}
    _fields: ClassVar[dict[str, tuple[str, Field]]] = {}
    _required: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = {name: value for name, value in vars(cls).items() if isinstance(value, _Declared)}
        for name in declared:
            delattr(cls, name)  # read from the instance; a class attribute would hide a typo
        cls._declared = declared
        cls._fields = {(d.key or name): (name, d.spec) for name, d in declared.items()}
        cls._required = tuple(d.key or name for name, d in declared.items() if d.default is _REQUIRED)

    def __init__(self, **given: Any) -> None:
        declared = type(self)._declared
        unknown = given.keys() - declared.keys()
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        for name, d in declared.items():
            if name in given:
                value = given[name]
            elif d.default is _REQUIRED:
                raise TypeError(f"{type(self).__name__} needs {name}")
            else:
                value = d.empty() if d.empty is not None else d.default
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __repr__(self) -> str:
        given = ", ".join(f"{name}={getattr(self, name)!r}" for name in type(self)._declared)
        return f"{type(self).__name__}({given})"

    def with_changes(self: P, **changes: Any) -> P:
        """A copy with these fields changed (as dataclasses.replace)."""
        return type(self)(**{**{name: getattr(self, name) for name in type(self)._declared}, **changes})

    @functools.cached_property
    def reporting(self) -> Reporting:
        """The general reporting options this rule sets (Reporting)."""
        return Reporting.of(self)

    def rewrites(self) -> bool:
        """Whether the rule has a replacement to write (a kind with a `replace` says so)."""
        return False

    @classmethod
    def of(cls: type[P], rule: Any) -> P:
        """The rule's parameters as this kind's class (the matcher's typed view of its rule)."""
        params = rule.params
        if not isinstance(params, cls):
            raise TypeError(f"rule {rule.code} is of kind {rule.kind!r}, not one that takes {cls.__name__}")
        return params

    @classmethod
    def field(cls, key: str) -> Field | None:
        entry = cls._fields.get(key)
        return entry[1] if entry else None

    @classmethod
    def required(cls) -> tuple[str, ...]:
        """The TOML keys a rule of this kind must give, in declaration order."""
        return cls._required

    @classmethod
    def from_table(cls: type[P], values: dict[str, Any]) -> P:
        """The object for a validated table (TOML key -> value): arrays become tuples."""
        kwargs = {}
        for key, value in values.items():
            name, _ = cls._fields[key]
            kwargs[name] = tuple(value) if isinstance(value, list) else value
        return cls(**kwargs)

    def references(self) -> list[tuple[str, str, str]]:
        """(TOML key, rule code, kind) of each field that names another rule and is given."""
        out = []
        for key, (name, spec) in type(self)._fields.items():
            value = getattr(self, name)
            if spec.rule_of_kind and value is not None:
                out.append((key, value, spec.rule_of_kind))
        return out


_NO_OPTIONS = Reporting()
