"""Kind `string-literal`: a whole string literal that names a device or backend.

`values` maps whole literals (`"cuda"` -> `"mlu"`, `"nccl"` -> `"cncl"`); `prefixes` maps a
literal's start, which also covers f-strings, `.format` and `+` building (`"cuda:{}"`,
`f"cuda:{rank}"`, `"cuda:" + str(i)`); `flag` lists literals that are only reported.
A literal is left alone where it is text or data rather than a device (README: comments,
docstrings, messages and data are never touched): docstrings and bare string statements, dictionary keys and
subscripts (`rng_state["cuda"]` is checkpoint data), parameter names (`pytest.mark.parametrize("cuda",
...)` names the test's `cuda` parameter), the name of a member a mock patches
(`monkeypatch.setattr(torch.version, "cuda", "12.1")`: the qualified-name kind renames it where
its object and name together are a renamed API), and arguments of calls named in
`keep_in_calls` (kernel registries keyed on the CUDA device type). Triton modules, whose
"cuda" is a backend name, are kept whole by the `device-guard` kind.

Where a literal may not be this target's value at all, it is reported instead of rewritten:
as an argument of a call into a module named in `report_in_modules` (Ray's collective
groups and vLLM's weight sync know only NCCL and GLOO) or as the default of such a call's
setting (an option or attribute that names the stack, `--vllm.sync_backend`, or a parameter
the function hands to that call), and, with `report_in_comparisons`,
compared with anything but a call into torch (`if args.backend == "nccl"` compares with a
value a launch script or config passes, which porter may not have changed) or a variable
that only ever holds literals rewritten in the same run or what torch answers (`backend =
"nccl" if ... else "gloo"`, `backend = dist.get_backend()`: the comparison follows it and is
rewritten with it).

A device literal in a decorator (`@pytest.mark.runs_on(["cuda"])`) of a test that needs a
CUDA-only stack (`keep_in_decorators_near`: a word found in that test's decorators, in the
module's own imports or the test's, its `pytest.importorskip(...)` calls or its path, such as sglang or megatron) is kept, with an `info` note:
the test cannot run on the target whatever its marker says, and the kept marker already
keeps it off the target.

A value of a dictionary from device to backend (`{"cuda": "nccl", "npu": "hccl"}`, looked up with
the device type at run time) is kept, and with `device_tables` ("cuda" -> "mlu") an entry for
the target is added beside it (`"cuda": "nccl", "mlu": "cncl"`): renaming the value would map
CUDA to CNCL and leave the target's device without an entry.

A constant named for the value it holds (`CUDA = "cuda"` in an enum, `BACKEND_NCCL =
"nccl"`) is reported, never rewritten: `DeviceType.CUDA = "mlu"` would make every check for
CUDA answer yes on MLU. The places that compare with it need the change instead.

With `in_keys`, the values are names of the target's own objects wherever they stand, keys
included: a tensor type name (`"torch.cuda.HalfTensor"`) is what `Tensor.type()` answers, and
a table keyed by it (`{"torch.cuda.HalfTensor": 0}`, `buckets[tp]`) is looked up with that
answer, so its keys must change with the comparisons.

A device string holds no whitespace: `"cuda:0 fp16 -> cpu fp32"` starts like one but is a
strategy that a library parses itself (RWKV's `strategy=`). With `flag_in_strategy`, a
string whose every word is a `strategy_words` word and one of them names a flagged device
is reported, never rewritten: whether the library takes the target's device there is the
library's business, and rewriting the module around it would leave it half converted.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from itertools import accumulate
from collections.abc import Iterable, Mapping
from functools import lru_cache

from porter.python.bindings import enclosing_scope, scope_bindings
from porter.python.kinds._foreign_flow import reaching
from porter.python.kinds._patch_targets import is_member_name
from porter.python.kinds.literal_text import literal_body
from porter.core.model import KEPT_CONSTANT, Finding
from porter.python.context import FileContext, StrConstant, is_str_constant
from porter.rules import Rule
from porter.rules.kinds import StringLiteralParams
from porter.python.kinds.base import PythonKind


def screen_words(rules: list[Rule]) -> set[str]:
    words: set[str] = set()
    for r in rules:
        words |= (
            set(StringLiteralParams.of(r).values)
            | set(StringLiteralParams.of(r).flag)
            | set(StringLiteralParams.of(r).flag_in_strategy)
        )
        words |= {p.rstrip(":") for p in StringLiteralParams.of(r).prefixes}
    return words


def _kept_context(ctx: FileContext, node: ast.AST, rule: Rule) -> bool:
    parent = ctx.parents.get(node)
    if isinstance(parent, ast.Expr):
        return True
    if StringLiteralParams.of(rule).in_keys:
        return False  # a name wherever it stands (see the module docstring)
    if isinstance(parent, ast.Subscript) and parent.slice is node:
        return True
    if isinstance(parent, ast.Dict) and any(k is node for k in parent.keys):
        return True
    if _is_key_lookup(ctx, node, parent) or _is_parameter_name(ctx, node, parent) or is_member_name(ctx, node):
        return True
    keep_calls = StringLiteralParams.of(rule).keep_in_calls
    if keep_calls:
        call = parent.func if isinstance(parent, ast.Call) else None
        if call is None and isinstance(parent, ast.keyword):
            grand = ctx.parents.get(parent)
            call = grand.func if isinstance(grand, ast.Call) else None
        if call is not None:
            name = call.attr if isinstance(call, ast.Attribute) else getattr(call, "id", None)
            if name in keep_calls:
                return True
    return False


_KEY_METHODS = {"get", "pop", "setdefault", "__getitem__", "__contains__"}


def _is_key_lookup(ctx: FileContext, node: ast.AST, parent: ast.AST | None) -> bool:
    """`state.get("cuda")` or `"cuda" in state`: the literal is a key of some mapping (data).

    `"cuda" in str(x.device)` and `"cuda" in device_name` test a device and are not kept:
    a membership test is data only when its right side is neither a `str(...)` call nor
    something named like a device.
    """
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node:
        func = parent.func
        return isinstance(func, ast.Attribute) and func.attr in _KEY_METHODS
    if (
        isinstance(parent, ast.Compare)
        and parent.left is node
        and all(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops)
    ):
        right = parent.comparators[0]
        if isinstance(right, ast.Call) and isinstance(right.func, ast.Name) and right.func.id == "str":
            return False
        return "device" not in ctx.text[slice(*ctx.span(right))].lower()
    return False


def _is_parameter_name(ctx: FileContext, node: ast.AST, parent: ast.AST | None) -> bool:
    """`@pytest.mark.parametrize("cuda", [True, False])`: the first argument names the test's
    parameter (`def test_x(cuda)`), an identifier, not a device; its values are devices."""
    call = _call_of(ctx, node)
    if call is None or not (isinstance(call.func, ast.Attribute) and call.func.attr == "parametrize"):
        return False
    return (bool(call.args) and call.args[0] is node) or (isinstance(parent, ast.keyword) and parent.arg == "argnames")


_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _assigned_target(ctx: FileContext, node: ast.AST) -> ast.expr | None:
    """What `node` is the whole value of: the one target of `X = node` or `x: T = node`."""
    parent = ctx.parents.get(node)
    if isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1:
        return parent.targets[0]
    if isinstance(parent, ast.AnnAssign) and parent.value is node:
        return parent.target
    return None


def _named_constant(ctx: FileContext, node: ast.AST, value: str) -> str | None:
    """The name of the constant `node` is the value of, when that name says the value's
    word (`CUDA`, `NCCL`): an UPPER_CASE name, or any attribute of an Enum-like class body."""
    target = _assigned_target(ctx, node)
    if not isinstance(target, ast.Name):
        return None
    name = target.id
    parent = ctx.parents.get(node)  # (the assignment: `node` is its value)
    in_class = parent is not None and isinstance(ctx.parents.get(parent), ast.ClassDef)
    if not (name.isupper() or in_class):
        return None
    word = re.split(r"[^A-Za-z]", value, maxsplit=1)[0].lower()
    return name if word and word in {w.lower() for w in _WORDS.findall(name)} else None


def _target_sibling(ctx: FileContext, node: ast.AST, target_value: str | None) -> str | None:
    """The name of a constant beside the one `node` is the value of (in the same class or
    block) that holds the target's value (`NPU = "npu"` beside `CUDA = "cuda"`), else None."""
    assign = ctx.parents.get(node)
    block = ctx.parents.get(assign) if assign is not None else None
    if target_value is None or block is None:
        return None
    for stmt in getattr(block, "body", ()):
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Constant)
            and stmt.value.value == target_value
        ):
            return stmt.targets[0].id
    return None


def _call_of(ctx: FileContext, node: ast.AST) -> ast.Call | None:
    """The call `node` is an argument of (positional, keyword or starred), else None; also as
    one branch of a choice (`backend="ipc" if hybrid else "nccl"`)."""
    parent = ctx.parents.get(node)
    while isinstance(parent, ast.IfExp) and parent.test is not node:
        node, parent = parent, ctx.parents.get(parent)
    if isinstance(parent, ast.keyword):
        parent = ctx.parents.get(parent)
    return parent if isinstance(parent, ast.Call) and parent.func is not node else None


def _callee(ctx: FileContext, node: ast.AST) -> str | None:
    """The qualified name of the call `node` is an argument of (_call_of), when imports resolve it."""
    call = _call_of(ctx, node)
    return ctx.imports.resolve(call.func) if call is not None else None


def _foreign_use(ctx: FileContext, node: ast.AST, rule: Rule) -> str | None:
    """Why the literal may not be a torch value here (see the module docstring), else None."""
    modules = tuple(StringLiteralParams.of(rule).report_in_modules)
    name = _callee(ctx, node) if modules else None
    if name and name.split(".", 1)[0] in modules:
        return f"an argument of {name}, which does not take torch's {ctx.target} backends"
    owner = _default_owner(ctx, node, modules) if modules else None
    if owner is not None:
        return owner
    parent = ctx.parents.get(node)
    if StringLiteralParams.of(rule).report_in_comparisons and isinstance(parent, ast.Compare):
        others = [parent.left, *parent.comparators]
        if not all(o is node or _torch_call(ctx, o) or _follows_the_port(ctx, o, rule) for o in others):
            return "compared with a value porter cannot follow (a launch script or config may still pass it)"
    return None


def _reaches_foreign(ctx: FileContext, node: StrConstant, rule: Rule) -> Finding | None:
    """A finding that keeps `node` when it reaches a call into a `report_in_modules` module
    through a variable of its function (porter/python/kinds/_foreign_flow.py): a note when
    the rule is `covered_by` another that reports the call itself (Lightning's Trainer and
    Fabric: PRT419), else a warning."""
    modules = tuple(StringLiteralParams.of(rule).report_in_modules)
    reached = reaching(ctx, modules).get(id(node)) if modules else None
    if reached is None:
        return None
    variable, callee, line = reached
    value = node.value
    covered = StringLiteralParams.of(rule).covered_by
    message = (
        f'"{value}" is a value of {variable}, given to {callee} (line {line}), which does not take '
        f"torch's {ctx.target} backends: kept"
    )
    if covered:
        return ctx.finding(rule, node, f"{message} (the call is {covered}'s finding)", subject=value, severity="info")
    return ctx.finding(
        rule, node, f"{message}; change it by hand if it is a torch backend", subject=value, severity="warning"
    )


def _torch_call(ctx: FileContext, node: ast.AST) -> bool:
    """A call into torch (`dist.get_backend()`): on the target it answers the target's value."""
    return isinstance(node, ast.Call) and (ctx.imports.resolve(node.func) or "").startswith("torch.")


def _follows_the_port(ctx: FileContext, other: ast.AST, rule: Rule) -> bool:
    """Whether `other` is a variable that only ever holds literals this rule rewrites in this
    very run (`backend = "nccl" if torch.cuda.is_available() else "gloo"` ... `if backend ==
    "nccl"`) or what torch answers (`backend = dist.get_backend()`, "cncl" on the target): the
    comparison follows its value, so it is rewritten with it. Every binding of
    the name in its scope is such a literal or call; a parameter counts by its default (`def
    __init__(self, backend="nccl")` ... `assert backend == "nccl"`: the default is rewritten,
    and a caller's "nccl" could not work on the target anyway). Not a global, nor a loop
    variable, nor a parameter without a default."""
    if not isinstance(other, ast.Name):
        return False
    if any(other.id in n.names for n in ctx.nodes(ast.Global, ast.Nonlocal)):
        return False
    values = scope_bindings(ctx, enclosing_scope(ctx, other)).get(other.id)
    if not values:
        return False
    literals: list[ast.AST] = []
    for value in values:
        if isinstance(value, ast.AnnAssign):  # `backend: str = "nccl"`
            value = value.value
        elif isinstance(value, ast.arg):
            arguments = ctx.parents.get(value)
            value = dict(_defaults(arguments)).get(value) if isinstance(arguments, ast.arguments) else None
        while isinstance(value, ast.IfExp):
            literals.append(value.body)
            value = value.orelse
        literals.append(value)
    answers = [v for v in literals if _torch_call(ctx, v)]
    literals = [v for v in literals if not _torch_call(ctx, v)]
    strings = [v for v in literals if is_str_constant(v)]
    if len(strings) != len(literals):
        return False  # a binding that is not a string literal (nor a call into torch)
    known = StringLiteralParams.of(rule).values
    rewritten = [v for v in strings if v.value in known]  # ("gloo" stays as it is)
    return bool(rewritten or answers) and all(
        _foreign_use(ctx, v, rule) is None and _named_constant(ctx, v, v.value) is None for v in rewritten
    )


_NAME_WORDS = re.compile(r"[a-z0-9]+")


def _default_owner(ctx: FileContext, node: ast.AST, modules: tuple[str, ...]) -> str | None:
    """The option of another stack the literal is the default of, else None: a command-line
    option or attribute that names it (`add_argument("--vllm.sync_backend", default="nccl")`,
    `getattr(args.vllm, "sync_backend", "nccl")`, a config field `vllm_sync_backend: str =
    "nccl"`), or a parameter the function hands to a call into it (`def init_group(backend="nccl")`
    calling ray's `init_collective_group`)."""
    target = _assigned_target(ctx, node)
    field = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
    if field and set(_NAME_WORDS.findall(field.lower())) & set(modules):
        return f"the default of {field}, a setting of another stack"
    parent = ctx.parents.get(node)
    if isinstance(parent, ast.keyword) and parent.arg == "default":
        call = ctx.parents.get(parent)
        if isinstance(call, ast.Call) and getattr(call.func, "attr", None) == "add_argument":
            names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if any(set(_NAME_WORDS.findall(n.lower())) & set(modules) for n in names):
                return f"the default of the option {names[0]}, a setting of another stack"
    if (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id == "getattr"
        and len(parent.args) == 3
        and parent.args[2] is node
    ):
        owner = ctx.text[slice(*ctx.span(parent.args[0]))]
        if set(_NAME_WORDS.findall(owner.lower())) & set(modules):
            return f"the default of a setting of {owner}, another stack"
    if isinstance(parent, ast.arguments):
        return _parameter_reaching(ctx, parent, node, modules)
    return None


def _parameter_reaching(
    ctx: FileContext, args: ast.arguments, default: ast.AST, modules: tuple[str, ...]
) -> str | None:
    """`def f(backend="nccl")` whose body passes `backend` to a call into `modules`."""
    name = next((a.arg for a, d in _defaults(args) if d is default), None)
    function = ctx.parents.get(args)
    if name is None or function is None:
        return None
    for use in ast.walk(function):
        if isinstance(use, ast.Name) and use.id == name and isinstance(use.ctx, ast.Load):
            call = _call_of(ctx, use)
            target = ctx.imports.resolve(call.func) if call is not None else None
            if target and target.split(".", 1)[0] in modules:
                return f"the default of {name}, which reaches {target}"
    return None


def _module_keeping(ctx: FileContext, node: ast.AST, value: str) -> str | None:
    """The callee `node` is an argument of, when it lives in a module of the tree that keeps
    `value` as a named constant (ActiveRules.kept_constants): `nanotron_timer("step", "cuda")`
    into the module whose `TimerType.CUDA = "cuda"` stays, which reads the argument as
    `TimerType("cuda")`. Rewritten, the call would hand it a value it does not know."""
    name = _callee(ctx, node) if ctx.kept_constants else None
    if not name:
        return None
    for module, kept in ctx.kept_constants:
        if kept == value and name.startswith(f"{module}."):
            return name
    return None


def _defaults(args: ast.arguments) -> list[tuple[ast.arg, ast.expr]]:
    """Each parameter that has a default, with it."""
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults))
    return pairs + [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]


def _cuda_only_test(ctx: FileContext, node: ast.AST, words: tuple[str, ...] | list[str]) -> str | None:
    """The CUDA-only stack a decorated test needs, when `node` is in one of its decorators."""
    if not words:
        return None
    child, parent = node, ctx.parents.get(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        child, parent = parent, ctx.parents.get(parent)
    if parent is None or not any(child is d for d in parent.decorator_list):
        return None
    texts = [ctx.text[slice(*ctx.span(d))] for d in parent.decorator_list]
    texts += _packages_needed(ctx, parent) + [ctx.path] + _skipped_unless_importable(ctx, parent)
    lowered = " ".join(texts).lower()
    return next((w for w in words if w in lowered), None)


def _owner_function(ctx: FileContext, node: ast.AST) -> ast.AST | None:
    """The outermost function `node` is in (None at module level or in a class body)."""
    owner, parent = None, ctx.parents.get(node)
    while parent is not None:
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            owner = parent
        parent = ctx.parents.get(parent)
    return owner


def _packages_needed(ctx: FileContext, test: ast.AST) -> list[str]:
    """The packages the test needs by import: the top-level package of each import of the
    module's own level or of the test itself. An import inside another test is that test's
    need, not this one's (litgpt's tests/test_adapter.py: test_adapter_bitsandbytes imports
    bitsandbytes; the gemma tests beside it do not need it), and a module of another
    package that only names one (`lightning.fabric.plugins.precision.bitsandbytes`) is not it."""
    out = []
    for node in ctx.imports.import_nodes:
        if _owner_function(ctx, node) not in (None, test):
            continue
        if isinstance(node, ast.Import):
            out += [a.name.split(".", 1)[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.append(node.module.split(".", 1)[0])
    return out


def _skipped_unless_importable(ctx: FileContext, test: ast.AST) -> list[str]:
    """The modules `pytest.importorskip("bitsandbytes")` asks for, at the module's level or in
    the test: the tests there need them as surely as an import statement says so."""
    return [
        call.args[0].value
        for call in ctx.nodes(ast.Call)
        if isinstance(call.func, (ast.Attribute, ast.Name))
        and getattr(call.func, "attr", getattr(call.func, "id", None)) == "importorskip"
        and call.args
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
        and _owner_function(ctx, call) in (None, test)
    ]


def _only_named(ctx: FileContext, node: ast.AST, value: str) -> bool:
    """A flagged literal that only names its value, where nothing is set to it: compared
    (`impl != "flash_attention_2"`, `x in ("fa2", ...)`), one name in a table of names
    (`SUPPORTED = {"sdpa", "flash_attention_2"}`, `choices=["eager", "flash_attention_2"]`, a
    dictionary from enum members to names),
    in a type annotation (`Literal["eager", "flash_attention_2"]`), or the value of a
    constant named for it (`FLASH_ATTENTION_2 = "flash_attention_2"`). Reported are the
    places that use it."""
    if _named_constant(ctx, node, value) is not None:
        return True
    parent = ctx.parents.get(node)
    # (None among the names is "not set": `choices=[None, "sdpa", "flash_attention_2"]`)
    if (
        isinstance(parent, (ast.Tuple, ast.List, ast.Set))
        and len(parent.elts) > 1
        and all(isinstance(e, ast.Constant) and (isinstance(e.value, str) or e.value is None) for e in parent.elts)
    ):
        # ... but not a command's argv, run by the call it is given to (`["nvidia-smi", "-L"]`)
        call = ctx.parents.get(parent)
        argv = (
            not isinstance(parent, ast.Set)
            and parent.elts[0] is node
            and isinstance(call, ast.Call)
            and bool(call.args)
            and call.args[0] is parent
        )
        if not argv:
            return True
    if (
        isinstance(parent, ast.Dict)
        and len(parent.values) > 1
        and any(v is node for v in parent.values)
        and all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in parent.values)
        and not any(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in parent.keys)
    ):
        # a table from names to names (`{Backend.flash_2: "flash_attention_2", Backend.torch:
        # "sdpa"}`); a dictionary of settings has string keys (`{"attn_implementation": ...}`)
        return True
    while isinstance(parent, (ast.Tuple, ast.List, ast.Set)):
        parent = ctx.parents.get(parent)
    if isinstance(parent, ast.Compare):
        return True
    while parent is not None and not isinstance(parent, ast.stmt):
        parent = ctx.parents.get(parent)
    return any(_contains(a, node) for a in _annotations(parent))


def _annotations(stmt: ast.AST | None) -> list[ast.expr]:
    """The type annotations a statement holds (a variable's, a function's arguments and return)."""
    if isinstance(stmt, ast.AnnAssign):
        return [stmt.annotation]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = stmt.args
        found = [
            a.annotation
            for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
            if a is not None and a.annotation is not None
        ]
        return found + ([stmt.returns] if stmt.returns is not None else [])
    return []


def _contains(tree: ast.AST, node: ast.AST) -> bool:
    return any(n is node for n in ast.walk(tree))


def _flagged(value: str, flag: set[str]) -> bool:
    """A flagged literal, or a command line that starts with one (`"nvidia-smi -L"`)."""
    return value in flag or value.split(" ", 1)[0] in flag


def _strategy_device(value: str, rule: Rule) -> str | None:
    """The flagged device a strategy string names (`"cuda fp16i8 *10 -> cpu fp32"`), else None."""
    devices = StringLiteralParams.of(rule).flag_in_strategy
    # Asked of every string of the file: a substring test first, the split only for the few
    # strings that name a device at all.
    if not devices or not any(d in value for d in devices):
        return None
    words = value.split()
    if len(words) < 2:
        return None
    vocabulary = _vocabulary(StringLiteralParams.of(rule).strategy_words)
    if not all(vocabulary.fullmatch(w) for w in words):
        return None  # prose that mentions a device
    return next((w.split(":", 1)[0] for w in words if w.split(":", 1)[0] in devices), None)


@lru_cache(maxsize=None)
def _vocabulary(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _is_device_text(node: ast.AST) -> bool:
    """No whitespace in the literal text (an f-string's expressions aside): a device string."""
    parts = node.values if isinstance(node, ast.JoinedStr) else [node]
    return not any(
        isinstance(p, ast.Constant) and isinstance(p.value, str) and any(c.isspace() for c in p.value) for p in parts
    )


def _triggers(rule: Rule) -> tuple[str, ...]:
    """Texts one of which every string the rule acts on holds: a value, a flagged word, a
    prefix, a strategy's device."""
    p = StringLiteralParams.of(rule)
    return (*p.values, *p.flag, *p.prefixes, *p.flag_in_strategy)


@lru_cache(maxsize=None)
def _any_trigger(triggers: frozenset[str]) -> re.Pattern[str] | None:
    if "" in triggers:
        return None  # every string
    return re.compile("|".join(re.escape(t) for t in sorted(triggers, key=lambda t: (-len(t), t))))


def _candidates(strings: list[StrConstant], rules: list[Rule]) -> list[StrConstant]:
    """The strings that hold any rule's trigger. A file has thousands of strings
    (docstrings, keys, messages) and few name a device: one search of all of them, joined,
    finds those, instead of every rule's tests on every string."""
    pattern = _any_trigger(frozenset(t for rule in rules for t in _triggers(rule)))
    if pattern is None or not strings:
        return strings
    values = [n.value for n in strings]
    starts = list(accumulate((len(v) + 1 for v in values[:-1]), initial=0))  # of each string in the joined text
    out: list[StrConstant] = []
    for match in pattern.finditer("\0".join(values)):  # no trigger holds the separator: a match is inside one string
        node = strings[bisect_right(starts, match.start()) - 1]
        if not out or out[-1] is not node:
            out.append(node)
    return out


def find(ctx: FileContext, rules: list[Rule]) -> Iterable[Finding]:
    strings = sorted(
        _candidates([n for n in ctx.own_nodes(ast.Constant) if is_str_constant(n)], rules),
        key=lambda n: (n.lineno, n.col_offset),
    )
    for rule in rules:
        values: Mapping[str, str] = StringLiteralParams.of(rule).values
        prefixes: Mapping[str, str] = StringLiteralParams.of(rule).prefixes
        flag = set(StringLiteralParams.of(rule).flag)
        starts = tuple(prefixes)
        kept_lines: set[tuple[str, int]] = set()
        for node in strings:
            value = node.value
            device = _strategy_device(value, rule)
            if device is not None:
                if not _kept_context(ctx, node, rule) and not isinstance(ctx.parents.get(node), ast.JoinedStr):
                    yield ctx.finding(
                        rule,
                        node,
                        f'"{value}" names {device} among other words (a strategy that a library parses): '
                        "kept, porter does not rewrite inside it",
                        subject=device,
                    )
                continue
            if not (value in values or _flagged(value, flag) or (value.startswith(starts) and _is_device_text(node))):
                continue
            if _kept_context(ctx, node, rule):
                continue
            parent = ctx.parents.get(node)
            if isinstance(parent, ast.JoinedStr):
                if _flagged(value, flag) and parent.values[0] is node:
                    yield ctx.finding(rule, parent, subject=value.split(" ", 1)[0])
                continue  # literal parts of an f-string: handled with the whole f-string below
            if _flagged(value, flag):
                if not _only_named(ctx, node, value):
                    yield ctx.finding(rule, node, subject=value)
                continue
            reached = _reaches_foreign(ctx, node, rule) if value in values else None
            if reached is not None:
                yield reached
                continue
            foreign = _foreign_use(ctx, node, rule) if value in values else None
            if foreign is not None:
                if (
                    rule.code,
                    node.lineno,
                ) not in kept_lines:  # `getattr(o.vllm, "b", "nccl") == "nccl"`: one line, one finding
                    kept_lines.add((rule.code, node.lineno))
                    yield ctx.finding(
                        rule,
                        node,
                        f'"{value}" is {foreign}: kept; change it by hand if it is a torch backend',
                        subject=value,
                        severity="warning",
                    )
                continue
            branch = _kept_device_branch(ctx, node, rule) if value in values else None
            if branch is not None:
                test, device_constant = branch
                yield ctx.finding(
                    rule,
                    node,
                    f'"{value}" is chosen when `{test}` holds, a test the port keeps ({device_constant} '
                    f"is a constant named for its device, kept): kept for that device; on "
                    f"{ctx.target.upper()} this branch is not taken, so add one for it that chooses "
                    f'"{values[value]}"',
                    subject=value,
                    severity="warning",
                )
                continue
            stack = _cuda_only_test(ctx, node, StringLiteralParams.of(rule).keep_in_decorators_near)
            if stack is not None:
                # A note: the kept marker already keeps the test off the target; nothing to do.
                yield ctx.finding(
                    rule,
                    node,
                    f'"{value}" kept: a device marker of a test that needs {stack}, '
                    f"which does not run on {ctx.target.upper()}",
                    subject=value,
                    severity="info",
                )
                continue
            table = _device_table(ctx, node, rule) if value in values else None
            if table is not None:
                if table:  # the table has no entry for the target yet: one is added beside this one
                    yield _table_entry(ctx, rule, node, *table, values[value])
                continue
            constant = _named_constant(ctx, node, value)
            if constant is not None:
                # (the subject marks it for the tree's run: porter/engine/kept_constants.py)
                sibling = _target_sibling(ctx, node, values.get(value))
                if sibling is not None:  # `NPU = "npu"` beside it: the code already tells them apart
                    yield ctx.finding(
                        rule,
                        node,
                        f'"{value}" is the value of {constant}, kept beside {sibling}, the '
                        f"{ctx.target.upper()}'s own: the code already tells the devices apart",
                        subject=f"{KEPT_CONSTANT}{value}",
                        severity="info",
                    )
                    continue
                yield ctx.finding(
                    rule,
                    node,
                    f'"{value}" is the value of {constant}, a constant named for it: kept '
                    f"(rewritten, every check for it would answer yes on {ctx.target.upper()}); "
                    "change the places that compare with it",
                    subject=f"{KEPT_CONSTANT}{value}",
                    severity="warning",
                )
                continue
            keeper = _module_keeping(ctx, node, value) if value in values else None
            if keeper is not None:
                # A note: the decision is the constant's (its own finding); this use follows it.
                yield ctx.finding(
                    rule,
                    node,
                    f'"{value}" is given to {keeper}, whose module keeps "{value}" as a '
                    "named constant: kept, so that the two still agree (the constant's finding "
                    "says what to decide)",
                    subject=value,
                    severity="info",
                )
                continue
            yield from _rewrite(ctx, rule, node, values, prefixes)
        if prefixes:
            for fstring in ctx.own_nodes(ast.JoinedStr):
                first = fstring.values[0] if fstring.values else None
                if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                    continue
                if (
                    not first.value.startswith(tuple(prefixes))
                    or not _is_device_text(fstring)
                    or _kept_context(ctx, fstring, rule)
                ):
                    continue
                yield from _rewrite(ctx, rule, fstring, {}, prefixes)


def _kept_device_branch(ctx: FileContext, node: ast.AST, rule: Rule) -> tuple[str, str] | None:
    """(test, constant) when `node` is chosen under a test for a device that the port keeps:
    the body of `if`/`elif` or of `x if test else y`, where the test compares with a constant
    named for a device of `device_tables` (`DeviceType.CUDA`, which porter never rewrites: see
    _named_constant), as LLaMA-Factory's process-group helper does (`elif accelerator.type ==
    DeviceType.CUDA: return "nccl"`). That branch still runs on CUDA only: rewritten, its
    backend would be wrong on CUDA and never reached on the target."""
    devices = tuple(StringLiteralParams.of(rule).device_tables)
    child, parent = node, ctx.parents.get(node)
    while (
        devices and parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ):
        test = None
        if isinstance(parent, ast.If) and any(child is s for s in parent.body):
            test = parent.test
        elif isinstance(parent, ast.IfExp) and child is parent.body:
            test = parent.test
        if test is not None:
            constant = _device_constant_tested(ctx, test, devices)
            if constant is not None:
                return ctx.text[slice(*ctx.span(test))], constant
        child, parent = parent, ctx.parents.get(parent)
    return None


def _device_constant_tested(ctx: FileContext, test: ast.AST, devices: tuple[str, ...]) -> str | None:
    """The constant named for one of `devices` that `test` says equals something
    (`x.type == DeviceType.CUDA`, `device in (Device.CUDA, ...)`): an UPPER_CASE name of the
    project's own, not one that resolves into torch (ProfilerActivity.CUDA has its own rename)."""
    for compare in (n for n in ast.walk(test) if isinstance(n, ast.Compare)):
        if not all(isinstance(op, (ast.Eq, ast.Is, ast.In)) for op in compare.ops):
            continue
        for operand in [compare.left, *compare.comparators]:
            for name_node in operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]:
                name = getattr(name_node, "attr", getattr(name_node, "id", ""))
                if not name.isupper() or not {w.lower() for w in _WORDS.findall(name)} & set(devices):
                    continue
                if not (ctx.imports.resolve(name_node) or "").startswith("torch."):
                    return ctx.text[slice(*ctx.span(name_node))]
    return None


def _device_table(ctx: FileContext, node: ast.AST, rule: Rule) -> tuple[str, str] | tuple[()] | None:
    """For a value of a dictionary keyed by device (`{"cuda": "nccl", "npu": "hccl"}`), a rule's
    `device_tables` names the key it stands for and the target's key: (device, target key), or
    () when the dictionary already has an entry for the target; None for any other literal."""
    tables = StringLiteralParams.of(rule).device_tables
    parent = ctx.parents.get(node)
    if not tables or not isinstance(parent, ast.Dict):
        return None
    key = next((k for k, v in zip(parent.keys, parent.values) if v is node), None)
    if not (is_str_constant(key) and key.value in tables):  # (only a string can be a key of `tables`)
        return None
    target = tables[key.value]
    has_target = any(isinstance(k, ast.Constant) and k.value == target for k in parent.keys)
    return () if has_target else (key.value, target)


def _table_entry(ctx: FileContext, rule: Rule, node: ast.AST, device: str, target: str, new: str) -> Finding:
    """The dictionary keeps its entry for `device` (code that still runs on it needs it) and
    gains one for the target right after it, in the literal's own quotes:
    `"cuda": "nccl", "mlu": "cncl"`."""
    start, end = ctx.span(node)
    source = ctx.text[start:end]
    quote = source[-1]
    return ctx.finding(
        rule,
        (start, end),
        f'{{"{device}": {source}}} maps a device to its backend: added "{target}": "{new}" beside it',
        replacement=f"{source}, {quote}{target}{quote}: {quote}{new}{quote}",
        subject=source.strip(quote),
        expect_old=source,
    )


def _rewrite(
    ctx: FileContext, rule: Rule, node: ast.AST, values: Mapping[str, str], prefixes: Mapping[str, str]
) -> Iterable[Finding]:
    start, end = ctx.span(node)
    source = ctx.text[start:end]
    body = literal_body(source)
    if body is None:
        yield ctx.finding(
            rule, node, "device string built in a way porter cannot rewrite; change it by hand", severity="warning"
        )
        return
    text = source[body[0] : body[1]]
    for old, new in list(values.items()) + list(prefixes.items()):
        exact = old in values
        if (exact and text == old) or (not exact and text.startswith(old)):
            s = start + body[0]
            yield ctx.finding(
                rule, (s, s + len(old)), f'"{old}" -> "{new}"', replacement=new, subject=old, expect_old=old
            )
            return


KIND = PythonKind("string-literal", screen=screen_words, find=find)
