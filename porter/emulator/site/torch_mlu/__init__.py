"""torch_mlu as emulated by porter (CPU-backed "mlu" devices). Not the vendor package.

Only processes started by `porter run --emulate mlu` / `porter verify` have this on their
path; see porter/emulator/__init__.py.
"""

from porter.emulator.runtime import install as _install

_mlu = _install()
__version__ = "emulated-" + _mlu._porter_version
