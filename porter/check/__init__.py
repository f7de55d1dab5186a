"""`porter check`: what `convert` would change and which torch APIs the target cannot run,
reported without writing anything (text, JSON, SARIF or GitHub annotations)."""

from porter.check.model import CheckResult, Checked, FileCheck
from porter.check.run import check_tree

__all__ = ["CheckResult", "Checked", "FileCheck", "check_tree"]
