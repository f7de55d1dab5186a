"""The Python rule kinds, in one explicit, ordered table (PYTHON_KINDS).

Each module matches one kind and ends with its `KIND` (porter/python/kinds/base.py: what it
screens for, its `find` and/or `finalize`); the fields its rules take are its parameters class
in porter/rules/kinds.py. Adding a kind: its module, its parameters class, a line in each table.
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
