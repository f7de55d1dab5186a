"""Integer device ordinals given to torch: `torch.device(0)`, `x.to(0)`, `torch.zeros(2, device=0)`.

An int names a device of the backend torch maps ints to. Stock torch before 2.3 maps it to
CUDA; from 2.3 to the PrivateUse1 backend once one is registered (torch/csrc/utils/
python_arg_parser.h, toDevice: is_privateuse1_backend_registered()), which `import torch_mlu`
does. Cambricon's torch 2.1 build maps it to PrivateUse1 whatever is imported (torch_mlu
r1.22_pt2.1.0, pytorch_patches/support_floattensor.diff: toDevice in a build without
USE_CUDA). So on MLU an int is an MLU device on both lines and is never rewritten; only on a
line whose torch maps ints by registration does an int evaluated before torch_mlu is imported
name CUDA, so there a module that gives one needs the import itself (the import-insert kind).

Only literals count: whether a variable (`local_rank`) holds an int or a device string is not
known here, and the import is added for what is certain.
"""

from __future__ import annotations

import ast
from typing import TypeGuard

from porter.python.context import FileContext


def _int(node: ast.AST) -> TypeGuard[ast.Constant]:
    return isinstance(node, ast.Constant) and type(node.value) is int


def int_device_ordinals(ctx: FileContext) -> list[ast.Constant]:
    """The int literals the file gives torch as a device: `torch.device(0)`, `.to(0)` (a tensor's
    or a module's, whatever the receiver: the import costs nothing where it is not one), and a
    `device=0` keyword of a call into torch or of `.to`."""
    out: list[ast.Constant] = []
    for call in ctx.own_nodes(ast.Call):
        name = ctx.imports.resolve(call.func) or ""
        method = call.func.attr if isinstance(call.func, ast.Attribute) and not name.startswith("torch") else None
        if (name == "torch.device" or method == "to") and call.args and _int(call.args[0]):
            out.append(call.args[0])
        if name.startswith("torch.") or method == "to":
            out.extend(k.value for k in call.keywords if k.arg == "device" and _int(k.value))
    return out
