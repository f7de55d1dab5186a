"""The codes of `porter verify` findings (PRT7xx): what went wrong when the port ran.

They are rules in porter's model (porter.rules.Rule, kind "runtime") so `porter rules
PRT70x` explains them like any other code, but no rule file holds them: nothing matches
source text; `porter verify` finds them by running the code under the emulator. Every
emulated target has the same codes; their texts name its device and package (the templates
below are written for mlu and torch_mlu, and filled in per target).
"""

from __future__ import annotations

from functools import lru_cache
from types import MappingProxyType
from typing import Mapping

from porter.emulator.targets import DEVICES, EmulatedDevice
from porter.rules import Example, Rule

_RAW = (
    (
        "PRT701",
        "import-error",
        "error",
        "a ported module raises while it is imported under the emulated {package}",
        "If the module cannot even be imported on the emulator it will not run on the {label} either.",
        "Read the traceback in the message; fix the line it names.",
        "import torch\nimport {package}\nCONFIG = open('missing.json').read()",
    ),
    (
        "PRT702",
        "missing-{name}-api",
        "error",
        "the code uses a torch.{name} API that the chosen {package} line does not have",
        "The emulated torch.{name} exposes exactly the vendor's API list for --target-version; this "
        "call raises AttributeError on that {package} too.",
        "Use an API the list has (`porter ops torch.cuda.NAME --target {name}`), or guard it with hasattr.",
        "import torch\nimport {package}\ntorch.{name}.nvtx.range_push('step')",
    ),
    (
        "PRT703",
        "device-mismatch",
        "error",
        'a tensor on another device (a hard-coded "cpu" or "cuda") meets {name} tensors',
        "On an accelerator, ops refuse operands on different devices, and an {label} machine has no CUDA; "
        "CPU-only runs never show either.",
        "Create the tensor on the same device as the others (device=x.device), or move it with .to().",
        "import torch\nimport {package}\nx = torch.ones(2, device='{name}') + torch.ones(2, device='cpu')",
    ),
    (
        "PRT704",
        "{name}-used-before-{package_dashed}",
        "error",
        'the "{name}" device or torch.{name} is used before `import {package}` ran',
        "torch only knows the {name} device after {package} registers it; an import placed after the first "
        "use fails with an unknown device type.",
        "Move `import {package}` right after `import torch`, before any use of the device.",
        "import torch\nx = torch.zeros(2, device='{name}')\nimport {package}",
    ),
    (
        "PRT705",
        "import-timeout",
        "warning",
        "importing a ported module did not finish within the time limit",
        "Work at import time (downloads, training, waiting on a process group) stalls every importer.",
        'Move the work under `if __name__ == "__main__":` or into a function; raise --timeout if it is legitimate.',
        "import time\ntime.sleep(3600)",
    ),
    (
        "PRT706",
        "lora-run-failed",
        "error",
        "porter_lora's training entry point failed on the emulated devices",
        "The rendered entry point must train on the target; a failure here is a failure on the cluster.",
        "Run the command in the message with `porter run --emulate {name} -- ...` and read its output.",
        "python porter_lora/train_lora.py --model tiny --data tiny.jsonl --device {name}",
    ),
    (
        "PRT707",
        "loss-not-falling",
        "error",
        "the LoRA smoke run trained, but its loss did not fall",
        "A loss that does not fall on a tiny learnable set means gradients or the optimizer do not "
        "reach the parameters on this device.",
        "Compare with the same run on CPU (--device cpu).",
        "python porter_lora/train_lora.py --model tiny --data tiny.jsonl --max_steps 20",
    ),
    (
        "PRT708",
        "smoke-command-failed",
        "error",
        "the command given with --run exited with a non-zero code under the emulator",
        "Your own smoke test of the port failed on the emulated device.",
        "Read the output in the message; the file and line are the innermost frame in the tree.",
        "porter verify OUT --run 'python train.py --max_steps 2'",
    ),
)
CODES = tuple(raw[0] for raw in _RAW)


def _filled(text: str, device: EmulatedDevice) -> str:
    words = {
        "name": device.name,
        "label": device.label,
        "package": device.package,
        "package_dashed": device.package.replace("_", "-"),
    }
    return text.format(**words)


@lru_cache(maxsize=None)
def for_target(target: str) -> tuple[Rule, ...]:
    """The runtime codes that apply to a target, worded for its device; none where porter
    has no emulator for it (hip keeps CUDA's device)."""
    device = DEVICES.get(target)
    if device is None:
        return ()
    return tuple(
        Rule(
            code=code,
            name=_filled(name, device),
            kind="runtime",
            target=target,
            summary=_filled(summary, device),
            why=_filled(why, device),
            severity=severity,
            applicability="manual",
            examples=(Example(before=_filled(example, device)),),
            suggestion=_filled(suggestion, device),
            source="porter/verify/codes.py",
        )
        for code, name, severity, summary, why, suggestion, example in _RAW
    )


def by_code(target: str) -> Mapping[str, Rule]:
    """The target's runtime rules by code."""
    return MappingProxyType({r.code: r for r in for_target(target)})
