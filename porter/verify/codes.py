"""The codes of `porter verify` findings (PRT7xx): what went wrong when the port ran.

They are rules in porter's model (porter.rules.Rule, kind "runtime") so `porter rules
PRT70x` explains them like any other code, but no rule file holds them: nothing matches
source text; `porter verify` finds them by running the code under the emulator.
"""

from __future__ import annotations

from porter.rules import Example, Rule

_RAW = (
    (
        "PRT701",
        "import-error",
        "error",
        "a ported module raises while it is imported under the emulated torch_mlu",
        "If the module cannot even be imported on the emulator it will not run on the MLU either.",
        "Read the traceback in the message; fix the line it names.",
        "import torch\nimport torch_mlu\nCONFIG = open('missing.json').read()",
    ),
    (
        "PRT702",
        "missing-mlu-api",
        "error",
        "the code uses a torch.mlu API that the chosen torch_mlu line does not have",
        "The emulated torch.mlu exposes exactly the vendor's API list for --target-version; this "
        "call raises AttributeError on that torch_mlu too.",
        "Use an API the list has (`porter ops torch.cuda.NAME --target mlu`), or guard it with hasattr.",
        "import torch\nimport torch_mlu\ntorch.mlu.nvtx.range_push('step')",
    ),
    (
        "PRT703",
        "device-mismatch",
        "error",
        'a tensor on another device (a hard-coded "cpu" or "cuda") meets mlu tensors',
        "On an accelerator, ops refuse operands on different devices, and an MLU machine has no CUDA; "
        "CPU-only runs never show either.",
        "Create the tensor on the same device as the others (device=x.device), or move it with .to().",
        "import torch\nimport torch_mlu\nx = torch.ones(2, device='mlu') + torch.ones(2, device='cpu')",
    ),
    (
        "PRT704",
        "mlu-used-before-torch-mlu",
        "error",
        'the "mlu" device or torch.mlu is used before `import torch_mlu` ran',
        "torch only knows the mlu device after torch_mlu registers it; an import placed after the first "
        "use fails with an unknown device type.",
        "Move `import torch_mlu` right after `import torch`, before any use of the device.",
        "import torch\nx = torch.zeros(2, device='mlu')\nimport torch_mlu",
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
        "Run the command in the message with `porter run --emulate mlu -- ...` and read its output.",
        "python porter_lora/train_lora.py --model tiny --data tiny.jsonl --device mlu",
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

RULES: tuple[Rule, ...] = tuple(
    Rule(
        code=code,
        name=name,
        kind="runtime",
        target="mlu",
        summary=summary,
        why=why,
        severity=severity,
        applicability="manual",
        examples=(Example(before=example),),
        suggestion=suggestion,
        source="porter/verify/codes.py",
    )
    for code, name, severity, summary, why, suggestion, example in _RAW
)
BY_CODE = {r.code: r for r in RULES}


def for_target(target: str) -> tuple[Rule, ...]:
    """The runtime codes that apply to a target (the emulator exists for mlu only)."""
    return RULES if target == "mlu" else ()
