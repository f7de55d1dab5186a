"""The generic rule kinds. Each module reads its rules' data and reports findings (with edits).

A kind module defines `REQUIRED` and `OPTIONAL` (field name -> type, validated by the rule
loader), `screen_words(rules)` (tokens whose absence proves the kind cannot fire in a file)
and either `check(ctx, rules)` (matching, one call per file) or `finalize(ctx, rules,
findings)` (runs after all matching, for kinds that depend on other edits).
"""

from __future__ import annotations

from types import ModuleType

from porter.kinds import (
    device_guard,
    env_var,
    import_insert,
    keyword_value,
    library_import,
    method,
    qualified_name,
    requirement_string,
    string_literal,
)

# Order matters only for finalizers: guards decide which edits stay before imports are added.
PYTHON_KINDS: dict[str, ModuleType] = {
    "qualified-name": qualified_name,
    "method": method,
    "string-literal": string_literal,
    "env-var": env_var,
    "keyword-value": keyword_value,
    "library-import": library_import,
    "requirement-string": requirement_string,
    "device-guard": device_guard,
    "import-insert": import_insert,
}

KIND_FIELDS: dict[str, tuple[dict[str, type], dict[str, type]]] = {
    name: (module.REQUIRED, module.OPTIONAL) for name, module in PYTHON_KINDS.items()
}


def register_kind(name: str, required: dict[str, type], optional: dict[str, type]) -> None:
    """Declare the fields of a non-Python kind (requirements, shell, ...) for the rule loader."""
    KIND_FIELDS[name] = (required, optional)
