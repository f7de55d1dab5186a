"""torch_mlu as emulated by porter (CPU-backed "mlu" devices). Not the vendor package.

Only processes started by `porter run --emulate mlu` / `porter verify` have this on their
path; see porter/emulator/__init__.py.
"""

from porter.emulator.vendor import load as _load

globals().update(_load("mlu", __name__))
