"""The Python rule kinds' matchers, in one explicit, ordered table (PYTHON_KINDS).

Each module matches one kind and ends with its `KIND` (porter/python/kinds/base.py: what it
screens for, its `find` and/or `finalize`); the kind's declaration (its parameters class, which
the loader validates rules against) is in porter/rules/kinds.py, where the loader and `porter
rules` read it without importing the matchers. Adding a Python kind: its parameters class and a
line in KINDS there, its module and a line here (a name not declared there fails at import).
"""

from __future__ import annotations

from porter.python.kinds import (
    device_guard,
    env_var,
    import_insert,
    kernel_module,
    keyword_value,
    library_import,
    method,
    qualified_name,
    requirement_string,
    string_literal,
)
from porter.python.kinds.base import PythonKind

# In the order finalizers must run: guards decide which edits stay before imports are added.
PYTHON_KINDS: tuple[PythonKind, ...] = (
    qualified_name.KIND,
    method.KIND,
    string_literal.KIND,
    env_var.KIND,
    keyword_value.KIND,
    library_import.KIND,
    requirement_string.KIND,
    kernel_module.KIND,
    device_guard.KIND,
    import_insert.KIND,
)
