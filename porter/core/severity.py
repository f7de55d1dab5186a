"""How serious a finding is: the one list of severities every layer uses (rule files,
package tables, findings, reports), kept apart from the model so that the command line can
check a rule's severity without loading it."""

from typing import Literal

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
