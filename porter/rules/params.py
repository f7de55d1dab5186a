"""Typed rule parameters: the base of every kind's parameters class, and how a field is declared.

A kind's rules carry their kind-specific TOML keys as one frozen dataclass (porter/rules/kinds.py
declares one per kind). Its fields say, besides the Python type the matcher reads, what the TOML
value must be and hold; the loader (porter/rules/load.py) validates a rule's table against them
and builds the object. Code reads `QualifiedName.of(rule).match`, never `params["match"]`: a
misspelt field is an error for mypy and at import, not a silent None.

TOML arrays become tuples (the object is frozen and shared by every file's run); tables stay
dicts, read-only by convention (typed `Mapping`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

P = TypeVar("P", bound="Params")


@dataclass(frozen=True)
class Field:
    """What a field's TOML value must be: its TOML type and, for a list/str/dict, the values it may hold."""

    type: type
    choices: tuple[str, ...] = ()  # for a list: each item; for a dict: each value; for a str: itself
    keys_in: tuple[str, ...] = ()  # for a dict: each key
    rule_of_kind: str | None = None  # a str that names another rule (by code) of this kind
    regex: bool = False  # for a list: each item is a regular expression (checked when the rules load)


_SPEC = "porter.spec"  # the dataclass field metadata key holding a Field
_KEY = "porter.key"  # the TOML key, where it is not a Python name (`class`)


def _declare(toml: type, default: Any, required: bool, key: str | None = None, **spec: Any) -> Any:
    metadata = {_SPEC: Field(toml, **spec), _KEY: key}
    if required:
        return dataclasses.field(metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def strings(
    *, required: bool = False, choices: tuple[str, ...] = (), regex: bool = False, absent: tuple | None = ()
) -> Any:
    """A TOML array (a tuple; `absent` when not given: empty, or None where "not given" and
    "empty" differ)."""
    return _declare(list, absent, required, choices=choices, regex=regex)


def text(
    *,
    required: bool = False,
    default: str | None = None,
    choices: tuple[str, ...] = (),
    rule_of_kind: str | None = None,
    key: str | None = None,
) -> Any:
    """A TOML string (None when absent, unless a default is given)."""
    return _declare(str, default, required, key=key, choices=choices, rule_of_kind=rule_of_kind)


def switch() -> Any:
    """A TOML boolean (False when absent)."""
    return _declare(bool, False, False)


def table(*, required: bool = False, choices: tuple[str, ...] = (), keys_in: tuple[str, ...] = ()) -> Any:
    """A TOML table (a dict, read-only by convention; an empty one when absent)."""
    spec = Field(dict, choices=choices, keys_in=keys_in)
    metadata = {_SPEC: spec, _KEY: None}
    if required:
        return dataclasses.field(metadata=metadata)
    return dataclasses.field(default_factory=_EMPTY.copy, metadata=metadata)


_EMPTY: dict = {}


@dataclass(frozen=True)
class Reporting:
    """How a rule's findings are reported, whatever its kind: the few general options a kind may
    declare as fields of its parameters class (a kind that does not declare one has its default).
    One stage applies them all (porter/engine/reporting.py and the Python pipeline's per-file
    pass, porter/python/analyze.py)."""

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


@dataclass(frozen=True, kw_only=True)
class Params:
    """The parameters of a rule of one kind; each kind subclasses it (porter/rules/kinds.py)."""

    # The fields of each subclass as the loader sees them: TOML key -> (Python name, Field),
    # filled by `schema_of` on first use (after the dataclass decorator has run).
    _fields: ClassVar[dict[str, tuple[str, Field]] | None] = None
    _required: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._fields = None

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
        entry = schema_of(cls).get(key)
        return entry[1] if entry else None

    @classmethod
    def required(cls) -> tuple[str, ...]:
        """The TOML keys a rule of this kind must give, in declaration order."""
        schema_of(cls)
        return cls._required

    @classmethod
    def from_table(cls: type[P], values: Mapping[str, Any]) -> P:
        """The object for a validated table (TOML key -> value): arrays become tuples."""
        schema = schema_of(cls)
        kwargs = {}
        for key, value in values.items():
            name, _ = schema[key]
            kwargs[name] = tuple(value) if isinstance(value, list) else value
        return cls(**kwargs)

    def references(self) -> list[tuple[str, str, str]]:
        """(TOML key, rule code, kind) of each field that names another rule and is given."""
        out = []
        for key, (name, spec) in schema_of(type(self)).items():
            value = getattr(self, name)
            if spec.rule_of_kind and value is not None:
                out.append((key, value, spec.rule_of_kind))
        return out


def schema_of(cls: type[Params]) -> dict[str, tuple[str, Field]]:
    """TOML key -> (Python name, Field) for a parameters class (computed once per class)."""
    if cls._fields is None:
        fields = {}
        required = []
        for f in dataclasses.fields(cls):
            spec = f.metadata.get(_SPEC)
            if spec is None:
                continue
            key = f.metadata.get(_KEY) or f.name
            fields[key] = (f.name, spec)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                required.append(key)
        cls._fields = fields
        cls._required = tuple(required)
        return fields
    return cls._fields


_NO_OPTIONS = Reporting()
