"""torch_npu as emulated by porter (CPU-backed "npu" devices). Not the vendor package.

Only processes started by `porter run --emulate npu` / `porter verify` have this on their
path; see porter/emulator/__init__.py.
"""

from porter.emulator.vendor import load as _load

globals().update(_load("npu", __name__))
