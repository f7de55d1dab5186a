"""The generic rule kinds of the Python pipeline. Each module reads its rules' data and
reports findings (with edits).

A kind module defines `screen_words(rules)` (tokens whose absence proves the kind cannot fire
in a file), or `screen_imports(rules)` (top-level packages whose import the kind looks for: no
import of any, no finding), and either `check(ctx, rules)` (matching, one call per file) or `finalize(ctx,
rules, findings)` (runs after all matching, for kinds that depend on other edits). The
fields each kind's rules take are declared in porter/rules/kinds.py and validated there.
"""

from __future__ import annotations

from types import ModuleType

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
from porter.rules.kinds import PYTHON_KINDS as _ORDER

_MODULES = {
    "qualified-name": qualified_name,
    "method": method,
    "string-literal": string_literal,
    "env-var": env_var,
    "keyword-value": keyword_value,
    "library-import": library_import,
    "requirement-string": requirement_string,
    "kernel-module": kernel_module,
    "device-guard": device_guard,
    "import-insert": import_insert,
}
# In the order of porter/rules/kinds.py: finalizers run in it (guards decide which edits stay
# before imports are added).
PYTHON_KINDS: dict[str, ModuleType] = {name: _MODULES[name] for name in _ORDER}
