"""The vendor toolkit's environment (Ascend's CANN): torch_npu loads CANN's libraries
(libascendcl, libhccl) from the paths its set_env.sh exports, with ASCEND_TOOLKIT_HOME and
ASCEND_HOME_PATH naming its folder. A target without a toolkit has no such check.

Sources: Ascend/pytorch README.md (source /usr/local/Ascend/ascend-toolkit/set_env.sh before
running), the CANN installation guide (the release is the `version=` line of
<toolkit>/<arch>-linux/ascend_toolkit_install.info), deepspeedai/DeepSpeed
op_builder/npu/builder.py (installed_cann_path reads ASCEND_HOME_PATH).
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

from porter.doctor.model import FAIL, OK, SKIP, WARN, Result
from porter.doctor.runtime import Runtime
from porter.doctor.targets import Toolkit


def toolkit_home(toolkit: Toolkit) -> tuple[str, str] | None:
    """(the variable, its value) of the first of the toolkit's variables that is set."""
    for variable in toolkit.variables:
        value = os.environ.get(variable)
        if value:
            return variable, value
    return None


def toolkit_release(toolkit: Toolkit, home: Path) -> str | None:
    """The `version=` line of the toolkit's install info under `home`, if there is one."""
    info = home / toolkit.info.format(arch=platform.machine())
    try:
        text = info.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip().lower() == "version" and value.strip():
            return value.strip()
    return None


def check_toolkit(rt: Runtime) -> Result | None:
    """The toolkit's environment is loaded; None for a target without a toolkit."""
    target = rt.spec
    toolkit = target.toolkit
    if toolkit is None:
        return None
    if rt.emulated:
        return Result(toolkit.check, SKIP, f"not needed under porter's emulator ({target.package} on the CPU)")
    setup = target.facts.toolkit_hint or f"load {toolkit.name}'s environment"
    fix = f"{setup} (or the set_env.sh of the {toolkit.name} you installed elsewhere)"
    found = toolkit_home(toolkit)
    if found is None:
        unset = " and ".join(toolkit.variables)
        if rt.vendor_ready():
            return Result(
                toolkit.check,
                WARN,
                f"{toolkit.name}'s environment is not loaded ({unset} unset), though {target.package} finds "
                f"the cards: {toolkit.unset_means}",
                fix,
            )
        return Result(
            toolkit.check,
            FAIL,
            f"{toolkit.name}'s environment is not loaded ({unset} unset): {target.package} needs its libraries",
            fix,
        )
    variable, value = found
    home = Path(value)
    if not home.is_dir():
        return Result(toolkit.check, FAIL, f"{variable}={value} is not a folder", fix)
    release = toolkit_release(toolkit, home)
    named = f"{toolkit.name} {release}" if release else f"{toolkit.name} (release not found in {toolkit.info})"
    return Result(toolkit.check, OK, f"{named} loaded from {value} ({variable})")
