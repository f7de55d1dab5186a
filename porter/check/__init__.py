"""`porter check`: what `convert` would change and which torch APIs the target cannot run,
reported without writing anything (text, JSON, SARIF or GitHub annotations)."""

from porter.check.model import CheckResult, Checked, FileCheck
from porter.check.run import check_tree

__all__ = ["CheckResult", "Checked", "FileCheck", "check_tree"]

# `porter.check(paths, target=...)` is the API (porter/api.py); see porter/__init__.py.
import sys as _sys  # noqa: E402

from porter import FeatureModule as _FeatureModule  # noqa: E402

_sys.modules[__name__].__class__ = _FeatureModule
