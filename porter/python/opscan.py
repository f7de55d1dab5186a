"""Kind `op-table`: every torch API a file uses, judged by the target's API table.

Read-only, on the stdlib `ast` (C-speed, the cheapest full parse) with porter's own import resolver,
as the rule engine resolves names. Two sorts of use:

- `api`: a name chain that resolves through imports to `torch.…` (calls, attribute reads
  and writes, decorators, base classes, `nn.X(...)` construction). Not uses: annotations,
  the class of a type test (`isinstance(m, nn.DataParallel)`: compared with, never run),
  modules (`F = torch.nn.functional`), dtypes and dunders (data, not ops; the tables do
  not list them), and other accelerators' namespaces (`torch.xpu`, `torch.npu`, ...: code reaches them only behind a
  check for that device).
- `method` / `likely-method`: `recv.name(...)` where `recv` is a tensor or an nn.Module
  (porter/receivers.py), looked up as `torch.Tensor.name` / `torch.nn.Module.name`; a method
  whose table entry is unknown is the user's own and is not reported.

A rule of this kind lists the `statuses` and `uses` it reports; `severity_by_status` may
lower the severity for some statuses; `opt_in` rules run only when --select names their
code. The kind never edits.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache

from porter.core.model import Finding, Severity
from porter.tables.optables import ANY_VERSION, ApiEntry, ApiTable
from porter.python.bindings import enclosing_scope, scope_bindings
from porter.python.context import FileContext
from porter.python.devices import other_devices
from porter.python.receivers import Receivers
from porter.rules import Rule
from porter.rules.kinds import OpTableParams

KIND = "op-table"
_DTYPES = {
    "float",
    "double",
    "half",
    "bfloat16",
    "float16",
    "float32",
    "float64",
    "long",
    "int",
    "short",
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "cfloat",
    "cdouble",
    "complex64",
    "complex128",
    "float8_e4m3fn",
    "float8_e5m2",
    "uint16",
    "uint32",
    "uint64",
}


@dataclass(frozen=True)
class ApiUse:
    """One use of an API: what the table says and where (an ast node)."""

    entry: ApiEntry
    use: str  # "api" | "method" | "likely-method"
    node: ast.AST


def api_uses(ctx: FileContext, table: ApiTable) -> list[ApiUse]:
    """Every torch API use in the file that the op scan can name."""
    uses: list[ApiUse] = []
    modules = _modules(table)
    for node, qual in ctx.own_import_chains:
        if not _is_api(qual, table.target) or qual in modules or ctx.in_annotation(node) or _type_tested(ctx, node):
            continue
        uses.append(ApiUse(_lookup(table, qual), "api", node))
    receivers = Receivers(ctx)
    for call in ctx.own_nodes(ast.Call):
        func = call.func
        if type(func) is not ast.Attribute or _method_entries(table, func.attr) == (None, None):
            continue  # not a method call, or not a name the table has for tensors or modules
        if ctx.imports.resolve(func.value) is not None:
            continue
        method = _method_use(table, receivers, func)
        if method is not None:
            uses.append(method)
    return uses


def find_unsupported(
    ctx: FileContext, rules: list[Rule], table: ApiTable, uses: list[ApiUse] | None = None
) -> list[Finding]:
    """Findings of the op-table rules for one file (`uses` when already computed)."""
    found: list[Finding] = []
    for use in api_uses(ctx, table) if uses is None else uses:
        if use.entry.when and not _holds(ctx, use, use.entry.when):
            continue  # a partial API used without the argument or case its limitation is about
        host_form = bool(use.entry.host_when) and _holds(ctx, use, use.entry.host_when)
        for rule in rules:
            if use.entry.status in OpTableParams.of(rule).statuses and use.use in OpTableParams.of(rule).uses:
                found.append(_finding(ctx, rule, table, use, host_form))
                break
    return found


def _holds(ctx: FileContext, use: ApiUse, triggers: tuple[str, ...]) -> bool:
    """Whether the use holds one of `triggers` (see ApiEntry.when and host_when): a keyword, a
    keyword with a literal value, a string argument, an attribute such as ReduceOp.BAND, or a
    first argument that is a given name or a dtype."""
    parent = ctx.parents.get(use.node)
    call = parent if isinstance(parent, ast.Call) and parent.func is use.node else None
    inside = [use.node] + ([*call.args, *call.keywords] if call is not None else [])
    nodes = [n for part in inside for n in ast.walk(part)]
    keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg} if call is not None else {}
    for trigger in triggers:
        if trigger.startswith("arg:"):
            first = call.args[0] if call is not None and call.args else keywords.get("dtype")
            if first is not None and _argument_is(ctx, first, trigger[4:]):
                return True
        elif trigger.startswith("."):
            if any(isinstance(n, ast.Attribute) and n.attr == trigger[1:] for n in nodes):
                return True
        elif trigger.startswith("'"):
            text = trigger.strip("'")
            if any(isinstance(n, ast.Constant) and n.value == text for n in nodes):
                return True
        elif "=" in trigger:
            name, _, literal = trigger.partition("=")
            value = keywords.get(name)
            if isinstance(value, ast.Constant) and value.value == ast.literal_eval(literal):
                return True
        elif trigger in keywords and not _is_none(keywords[trigger]):
            if trigger == "generator" and _cpu_generator(ctx, keywords[trigger]):
                continue  # the limitation is about a device generator (litgpt's torch.Generator().manual_seed(s))
            return True
    return False


def _cpu_generator(ctx: FileContext, node: ast.AST) -> bool:
    """Whether `node` is a CPU generator: `torch.Generator()` without a device (or with "cpu"),
    perhaps seeded in the same expression (`.manual_seed(s)`), or a name the enclosing function
    (or module) binds only to one."""
    values = _local_values(ctx, node) if isinstance(node, ast.Name) else [node]
    if not values:
        return False
    for value in values:
        while (
            isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "manual_seed"
        ):
            value = value.func.value
        if not (isinstance(value, ast.Call) and ctx.imports.resolve(value.func) == "torch.Generator"):
            return False
        device = value.args[0] if value.args else next((k.value for k in value.keywords if k.arg == "device"), None)
        if device is not None and not _is_cpu(ctx, device):
            return False
    return True


def _is_cpu(ctx: FileContext, node: ast.AST) -> bool:
    """Whether a device argument is the CPU: "cpu" or torch.device("cpu")."""
    if isinstance(node, ast.Call) and ctx.imports.resolve(node.func) == "torch.device" and len(node.args) == 1:
        node = node.args[0]
    return isinstance(node, ast.Constant) and node.value == "cpu"


def _local_values(ctx: FileContext, name: ast.Name) -> list[ast.AST]:
    """The values plain assignments give `name` in the function (or module) that reads it, or []
    when it is bound there any other way (a parameter, a loop, unpacking, `with ... as`) or not
    at all: the name then holds what porter cannot see."""
    values = scope_bindings(ctx, enclosing_scope(ctx, name)).get(name.id, [])
    return values if all(isinstance(v, ast.expr) for v in values) else []


def _argument_is(ctx: FileContext, node: ast.AST, name: str) -> bool:
    """Whether an argument is `name` (a qualified name, through the file's imports), or for
    `dtype` a torch dtype: torch.float32, an attribute `x.dtype`, a variable named dtype."""
    qual = ctx.imports.resolve(node)
    if name != "dtype":
        return qual == name
    if qual is not None:
        return qual.startswith("torch.") and qual[len("torch.") :] in _DTYPES
    if isinstance(node, ast.Attribute):
        return node.attr == "dtype"
    if not isinstance(node, ast.Name):
        return False
    if node.id == "dtype" or node.id.endswith("_dtype"):
        return True
    # A name the function binds only to dtypes (ms-swift's GaLore: `original_type = p.data.dtype`).
    values = _local_values(ctx, node)
    return bool(values) and all(not isinstance(v, ast.Name) and _argument_is(ctx, v, "dtype") for v in values)


def _is_none(node: ast.AST) -> bool:
    """The literal None (`generator=None` passes none)."""
    return isinstance(node, ast.Constant) and node.value is None


def table_label(table: ApiTable) -> str:
    """How messages name a table: the mlu table for torch 2.4, the hip table (any torch version)."""
    if table.version == ANY_VERSION:
        return f"the {table.target} table (any torch version)"
    return f"the {table.target} table for torch {table.version}"


def _finding(ctx: FileContext, rule: Rule, table: ApiTable, use: ApiUse, host_form: bool = False) -> Finding:
    entry = use.entry
    where = table_label(table)
    likely = " (receiver probably a tensor)" if use.use == "likely-method" else ""
    message = f"{entry.api}{likely}: {entry.status} in {where}"
    note = entry.host_note if host_form else entry.note
    if note:
        message += f": {note}"
    suggestion: str | None  # (the rule's own may be None)
    if entry.counterpart:
        suggestion = f"Use {entry.counterpart}."
    elif entry.status == "unknown":
        suggestion = f"Not in {where}; verify it on the device."
    elif host_form:  # the note says why this form runs: nothing to replace (other forms stay findings)
        suggestion = "Keep it in this form; verify it on the device."
    elif entry.doubtful:  # the note says to expect it to work: a replacement would contradict it
        suggestion = f"Keep it and verify it on the device (`porter ops {entry.api} --target {table.target}` says why)."
    else:
        suggestion = rule.suggestion
    severity: Severity = OpTableParams.of(rule).severity_by_status.get(entry.status, rule.severity)
    if entry.status == "partial" and not entry.when:
        severity = "info"  # a limitation no code shows (a card generation, a dtype pair): a note
    if entry.doubtful or host_form:
        severity = "info"  # the vendor's "unsupported" for host-side code is evidence, not proof
    where_span = ctx.span(use.node)
    if isinstance(use.node, ast.Attribute) and use.use != "api":  # point at the method name
        where_span = (where_span[1] - len(use.node.attr), where_span[1])
    return ctx.finding(rule, where_span, message, suggestion=suggestion, subject=entry.api, severity=severity)


_TYPE_TESTS = frozenset({"isinstance", "issubclass"})


def _type_tested(ctx: FileContext, node: ast.AST) -> bool:
    """Whether `node` is the class a type test asks about (`isinstance(m, nn.InstanceNorm2d)`,
    or one of a tuple of them): the class is only compared with, never run on a device."""
    parent = ctx.parents.get(node)
    if isinstance(parent, ast.Tuple):
        node, parent = parent, ctx.parents.get(parent)
    return (
        isinstance(parent, ast.Call)
        and len(parent.args) == 2
        and parent.args[1] is node
        and isinstance(parent.func, ast.Name)
        and parent.func.id in _TYPE_TESTS
    )


@lru_cache(maxsize=None)
def _other_device_apis(target: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(names, prefixes) of other accelerators' torch modules: their calls are theirs, not the target's."""
    names = (*(f"torch.{device}" for device in other_devices(target)), "torch.backends.mps")
    return names, tuple(n + "." for n in names)


def _is_api(qual: str, target: str) -> bool:
    others, prefixes = _other_device_apis(target)
    if not qual.startswith("torch.") or qual in others or qual.startswith(prefixes):
        return False
    last = qual.rsplit(".", 1)[1]
    return not (last.startswith("__") or (qual.count(".") == 1 and last in _DTYPES))


@lru_cache(maxsize=None)
def _modules(table: ApiTable) -> frozenset[str]:
    """Names the table knows only as the start of other entries: modules such as
    torch.nn.functional (a class such as torch.nn.Linear has an entry of its own)."""
    prefixes: set[str] = set()
    for key in table.entries:
        end = key.rfind(".")
        while end > 0:
            head = key[:end]
            if head in prefixes:
                break  # and so are its own heads: keys share them, so this stays near one step a key
            prefixes.add(head)
            end = key.rfind(".", 0, end)
    return frozenset(prefixes.difference(table.entries))


def _lookup(table: ApiTable, qual: str) -> ApiEntry:
    """The entry for `qual`, else for the longest listed prefix (`torch.distributed.ReduceOp`
    for `torch.distributed.ReduceOp.SUM`), else `unknown` for the full name."""
    entry = table.lookup(qual)
    if entry.status != "unknown":
        return entry
    parts = qual.split(".")
    for end in range(len(parts) - 1, 1, -1):
        parent = table.lookup(".".join(parts[:end]))
        if parent.status != "unknown":
            return parent
    return entry


@lru_cache(maxsize=4096)
def _method_entries(table: ApiTable, name: str) -> tuple[ApiEntry | None, ApiEntry | None]:
    """(tensor entry, module entry) of a method name: asked for every `x.name(...)` of a file."""
    return table.tensor_method(name), table.module_method(name)


def _method_use(table: ApiTable, receivers: Receivers, func: ast.Attribute) -> ApiUse | None:
    tensor_entry, module_entry = _method_entries(table, func.attr)
    if tensor_entry is None and module_entry is None:
        return None
    try:
        answer = receivers.kind(func.value)
    except RecursionError:  # a pathological expression: say nothing rather than guess
        return None
    if answer is None:
        return None
    kind, certainty = answer
    entry = tensor_entry if kind == "tensor" else module_entry
    if entry is None:
        return None
    return ApiUse(entry, "method" if certainty == "known" else "likely-method", func)
