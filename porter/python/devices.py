"""Other vendors' accelerators, as torch (`torch.npu`) and device strings (`"npu"`) name them.

Code that reaches one (a `torch.xpu` call, an import under `if device == "npu":`) runs only
on that accelerator, never on porter's targets. "cuda" is not one of them: porter renames
it, and that code then runs on the target.
"""

OTHER_DEVICES = ("xpu", "mps", "npu", "mtia", "hpu")
