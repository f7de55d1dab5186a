"""The words of the rule model that porter needs before it loads a rule: the targets, the
severities and applicabilities a rule may have, and the error a malformed rule raises.

The command line checks `--target` against TARGETS on every start, so this stays a module
of constants (loading the model and the loader costs more than a warm run spends on them).
"""

from porter.core.severity import SEVERITIES  # noqa: F401  (one list for every layer)
from porter.core.targets import TARGETS  # noqa: F401  (one list for every layer)

# How messages and reports name each target's hardware.
TARGET_NAMES = {"mlu": "Cambricon MLU", "hip": "ROCm / Hygon DCU", "npu": "Huawei Ascend NPU"}
# The package whose releases a rule's `versions` (torch lines) are lines of, for `porter rules CODE`.
VERSIONED_PACKAGES = {"mlu": "torch_mlu", "hip": "torch (ROCm)", "npu": "torch_npu"}
# How an option's help names the targets (every command that takes --target).
TARGET_HELP = "mlu (Cambricon, torch_mlu), hip (Hygon DCU / ROCm) or npu (Huawei Ascend, torch_npu)"
APPLICABILITY = ("safe", "unsafe", "manual")


class RuleError(ValueError):
    """A rule file is malformed; the message names the file and the key."""
