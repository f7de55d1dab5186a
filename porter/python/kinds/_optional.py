"""Whether an import must succeed for its module to run.

Six answers, asked of the statements around one `import`:

- it never runs: under `if TYPE_CHECKING:` (a type checker reads it, Python does not);
- it is optional: the module already runs without the package, because the import sits in
  a `try:` whose handler catches the ImportError and goes on (`except ImportError: x =
  None`, an env report's `except Exception: pass`), or under a test that asks whether the
  package is installed (`if is_vllm_available():`, `if importlib.util.find_spec("x"):`);
- it is switched: under a setting that turns a feature on (`if args.use_8bit_adam:`, `if
  cfg.enable_xformers:`), so the module runs without it while the switch is off;
- it runs elsewhere: under a test that another vendor's accelerator is in use (`if
  self.device == "npu":`, `elif torch.xpu.is_available():`), where the target never goes;
- it belongs to a test: inside a `test_*` function, it is that test's own dependency (a
  test of Megatron or sglang), which cannot run on the target whatever is ported;
- it is required: anything else, including a `try:` whose handler raises again.

An optional import is not what breaks on the target; the code that uses the package is,
and other rules report that use where it is (a QLoRA config, an 8-bit optimizer name).
"""

from __future__ import annotations

import ast
import re

from porter.python.context import FileContext, is_str_constant, is_test_function
from porter.python.devices import other_devices

_STOPS = {"exit", "_exit", "quit", "abort"}
_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
# Calls that ask whether a package is installed: `is_vllm_available()`, `_is_package_available("x")`,
# `importlib.util.find_spec("x")`, `pkgutil.find_loader("x")`.
_AVAILABILITY_CALL = re.compile(r"(?:^|_)(?:is_\w+_available|\w*package_available|find_spec|find_loader)$")
# Settings that turn a feature on, read as they are (`args.use_8bit_adam`, `self.config.enable_x`).
_SWITCH = re.compile(r"(?:use|enable|with)_\w+")


def how_needed(ctx: FileContext, node: ast.AST) -> tuple[str, str | None]:
    """'never' (type checking only), 'elsewhere' (another accelerator's code), 'optional'
    (guarded), 'switched' (under a setting, which comes second), 'test' (a test's own) or
    'required'."""
    child, parent = node, ctx.parents.get(node)
    optional = test = elsewhere = False
    switch: str | None = None
    while parent is not None:
        if is_test_function(parent):
            test = True
        if isinstance(parent, ast.If) and any(child is s for s in parent.body):
            if _is_type_checking(parent.test):
                return "never", None
            if _asks_availability(parent.test):
                optional = True
            if _on_other_device(parent.test, other_devices(ctx.target)):
                elsewhere = True
            if _is_switch(parent.test):
                switch = ast.unparse(parent.test)
        elif isinstance(parent, ast.Try) and any(child is s for s in parent.body):
            if any(_swallows_import_error(h) for h in parent.handlers):
                optional = True
        child, parent = parent, ctx.parents.get(parent)
    if elsewhere or optional:
        return ("elsewhere" if elsewhere else "optional"), None
    if switch is not None:
        return "switched", switch
    return ("test" if test else "required"), None


def _is_switch(test: ast.AST) -> bool:
    """The test is a setting read as it is: `args.use_8bit_adam`, `cfg.enable_xformers`."""
    name = test.attr if isinstance(test, ast.Attribute) else test.id if isinstance(test, ast.Name) else None
    return name is not None and _SWITCH.fullmatch(name) is not None


def _is_type_checking(test: ast.AST) -> bool:
    name = test.attr if isinstance(test, ast.Attribute) else test.id if isinstance(test, ast.Name) else None
    return name == "TYPE_CHECKING"


def _asks_availability(test: ast.AST) -> bool:
    """The test holds an availability question that is not negated (`if not is_x_available():`
    is the branch that runs without the package)."""
    for node in ast.walk(test):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return False
    for node in ast.walk(test):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if _AVAILABILITY_CALL.search(name):
                return True
    return False


def _on_other_device(test: ast.AST, others: tuple[str, ...]) -> bool:
    """The test holds only where another vendor's accelerator is in use: a device string
    compared with one of theirs (`device == "npu"`, `args.device in ("npu", "xpu")`),
    `torch.xpu.is_available()`, or one of those `and` more."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_on_other_device(value, others) for value in test.values)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.In)):
        for side in (test.left, test.comparators[0]):
            names = _strings(side)
            if names and all(name in others for name in names):
                return True
        return False
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "is_available":
        owner = test.func.value
        return (
            isinstance(owner, ast.Attribute)
            and owner.attr in others
            and isinstance(owner.value, ast.Name)
            and owner.value.id == "torch"
        )
    return False


def _strings(node: ast.AST) -> list[str]:
    """The string constants `node` is made of (a string, or a tuple, list or set of them)."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    texts = [i.value for i in items if is_str_constant(i)]
    return texts if len(texts) == len(items) else []  # only when every item is a string


def _swallows_import_error(handler: ast.ExceptHandler) -> bool:
    """The handler catches a failed import and goes on without raising again. A raise under
    an `if` of the handler is for some failures only (`if "undefined symbol" in str(e):
    raise`, a package installed but broken): a package that is not there still passes."""
    caught = handler.type
    if caught is not None:
        names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
        if not any(
            (n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", None)) in _IMPORT_ERRORS for n in names
        ):
            return False
    for node in (n for stmt in handler.body if not isinstance(stmt, ast.If) for n in ast.walk(stmt)):
        if isinstance(node, ast.Raise):
            return False
        if (
            isinstance(node, ast.Call)
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in _STOPS
        ):
            return False  # `except ImportError: sys.exit("install x")`: the import is required
    return True
