"""Is this expression a tensor or an nn.Module? A cheap local reading, for method lookups.

Method names are ambiguous (`d.values()` is usually a dict), so the op scan asks about a
method only where the receiver is a tensor or a module. The answer comes from the file
alone: torch calls that return tensors, `nn.X(...)` constructions, annotations, `self` in
an nn.Module subclass, and the names bound to those within the same function. A name
with some tensor bindings and some unknown ones is only *likely* a tensor.
"""

from __future__ import annotations

import ast
from typing import Literal

from porter.python.bindings import enclosing_scope, scope_bindings
from porter.python.context import FileContext

Kind = Literal["tensor", "module"]
Certainty = Literal["known", "likely"]
Answer = tuple[Kind, Certainty] | None

_TENSOR_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.")
_TENSOR_TYPES = {"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"} | {
    f"torch.{t}Tensor" for t in ("Float", "Long", "Bool", "Half", "BFloat16", "Int", "Double")
}
# Callables of torch and its tensor namespaces that return something other than one tensor.
_NOT_TENSOR = set(
    """device dtype no_grad enable_grad inference_mode set_grad_enabled autocast load save
    compile manual_seed seed initial_seed is_tensor is_floating_point is_complex numel get_default_dtype
    set_default_dtype finfo iinfo get_rng_state set_rng_state is_grad_enabled use_deterministic_algorithms
    typename broadcast_shapes split chunk unbind meshgrid tensor_split hsplit vsplit dsplit sort topk
    kthvalue std_mean var_mean aminmax frexp histogram lu svd qr slogdet eig eigh lstsq lu_factor""".split()
)
# Tensor methods whose result is not one tensor.
_NOT_TENSOR_METHODS = _NOT_TENSOR | set(
    """item tolist numpy size dim ndimension nelement data_ptr
    element_size stride storage untyped_storage is_contiguous get_device type equal register_hook
    backward storage_offset""".split()
)
_TENSOR_ATTRS = {"T", "mT", "H", "mH", "data", "grad", "real", "imag"}
# Module methods that return the module itself.
_SELF_METHODS = set(
    "to cuda mlu npu cpu half float double bfloat16 train eval requires_grad_ to_empty type apply".split()
)


class Receivers:
    """Answers `kind(expr)` for one file; caches per name and scope."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._names: dict[tuple[int, str], Answer] = {}

    def kind(self, node: ast.AST) -> Answer:
        """("tensor"|"module", "known"|"likely"), or None when the file does not tell."""
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Name):
            return self._name(node.id, enclosing_scope(self.ctx, node))
        if isinstance(node, ast.Attribute):
            base = self.kind(node.value)
            if base and base[0] == "tensor" and node.attr in _TENSOR_ATTRS:
                return base
            if base and base[0] == "module" and node.attr in ("weight", "bias"):
                return "tensor", "likely"
            return None
        if isinstance(node, ast.Subscript):
            base = self.kind(node.value)
            return base if base and base[0] == "tensor" else None
        if isinstance(node, ast.BinOp):
            sides = [self.kind(node.left), self.kind(node.right)]
            tensors = [s for s in sides if s and s[0] == "tensor"]
            return ("tensor", "known" if all(s[1] == "known" for s in tensors) else "likely") if tensors else None
        if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
            return self.kind(node.operand)
        return None

    def annotation(self, node: ast.AST | None) -> Answer:
        """What an annotation says (`torch.Tensor`, `Optional[nn.Module]`, `"torch.Tensor"`)."""
        if node is None:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(node, ast.Subscript) and (self.ctx.imports.resolve(node.value) or "").endswith("Optional"):
            return self.annotation(node.slice)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            left, right = self.annotation(node.left), self.annotation(node.right)
            if isinstance(node.right, ast.Constant) and node.right.value is None:
                return left
            return right if isinstance(node.left, ast.Constant) and node.left.value is None else None
        qual = self.ctx.imports.resolve(node) or ""
        if qual in _TENSOR_TYPES:
            return "tensor", "known"
        return ("module", "known") if _is_module_class(qual) else None

    def _call(self, node: ast.Call) -> Answer:
        func = node.func
        qual = self.ctx.imports.resolve(func)
        if qual is not None:
            if qual in _TENSOR_TYPES or qual == "torch.tensor":
                return "tensor", "known"
            if _is_module_class(qual):
                return "module", "known"
            parts = qual.split(".")
            top_level = len(parts) == 2 and parts[0] == "torch" and parts[1][:1].islower()
            if (top_level or qual.startswith(_TENSOR_NAMESPACES)) and parts[-1] not in _NOT_TENSOR:
                return "tensor", "known"
            return None
        if isinstance(func, ast.Attribute):
            base = self.kind(func.value)
            if base and base[0] == "tensor" and func.attr not in _NOT_TENSOR_METHODS:
                return base
            if base and base[0] == "module" and func.attr in _SELF_METHODS:
                return base
        return None

    def _name(self, name: str, scope: ast.AST) -> Answer:
        key = (id(scope), name)
        if key in self._names:
            return self._names[key]
        self._names[key] = None  # a name bound from itself (x = x.float()) answers None inside
        sources = scope_bindings(self.ctx, scope).get(name)
        if sources is None:
            answer = None if isinstance(scope, ast.Module) else self._name(name, self.ctx.tree)
        else:
            answers = [self._binding(src, scope) for src in sources]
            answer = _combine(answers)
        self._names[key] = answer
        return answer

    def _binding(self, source: ast.AST, scope: ast.AST) -> Answer:
        if isinstance(source, ast.arg):
            if source.annotation is not None:
                return self.annotation(source.annotation)
            return self._self_arg(source, scope)
        if isinstance(source, ast.AnnAssign):
            return self.annotation(source.annotation) or (self.kind(source.value) if source.value else None)
        return self.kind(source) if isinstance(source, ast.expr) else None

    def _self_arg(self, arg: ast.arg, scope: ast.AST) -> Answer:
        """`self` of a method in a class that derives from an nn.Module class."""
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) or not scope.args.args:
            return None
        owner = self.ctx.parents.get(scope)
        if scope.args.args[0] is arg and isinstance(owner, ast.ClassDef):
            if any(_is_module_class(self.ctx.imports.resolve(b) or "") for b in owner.bases):
                return "module", "known"
        return None


def _combine(answers: list[Answer]) -> Answer:
    kinds = {a[0] for a in answers if a}
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    known = all(a is not None and a[1] == "known" for a in answers)
    return kind, "known" if known else "likely"


def _is_module_class(qual: str) -> bool:
    """torch.nn.Module and the torch.nn layer classes (torch.nn.Linear, torch.nn.modules.x.Y)."""
    parts = qual.split(".")
    if len(parts) < 3 or parts[:2] != ["torch", "nn"] or not parts[-1][:1].isupper():
        return False
    if qual in _TENSOR_TYPES or parts[-1] in ("Parameter", "Buffer", "UninitializedParameter"):
        return False
    return len(parts) == 3 or parts[2] == "modules"
