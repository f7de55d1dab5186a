"""A project rule as a libcst codemod: our helper mycorp.cuda_sync() is mycorp.device_sync()."""

import libcst as cst
import libcst.matchers as m
from libcst.codemod import VisitorBasedCodemodCommand


class DeviceSync(VisitorBasedCodemodCommand):
    CODE = "PRT811"  # PRT and 3 digits that porter does not use (the PRT8xx band is free)
    DESCRIPTION = "mycorp.cuda_sync() is mycorp.device_sync() on every accelerator"
    NAMES = ["cuda_sync"]  # it runs only on .py files that contain one of these words
    SEVERITY = "warning"  # optional, as TARGETS = ["mlu"], NAME, WHY, SUGGESTION

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
        if m.matches(updated_node, m.Attribute(value=m.Name("mycorp"), attr=m.Name("cuda_sync"))):
            return updated_node.with_changes(attr=cst.Name("device_sync"))
        return updated_node
