"""Kind `env-var`: environment variable names in code.

A string literal that is exactly a listed name (`os.environ["CUDA_VISIBLE_DEVICES"]`,
`os.getenv(...)`, `.pop(...)`) or that assigns it in a command line (`"CUDA_VISIBLE_DEVICES=0 python ..."`,
also in f-strings) is renamed per `replace` (exact names, or prefixes ending in `_` such
as `TORCH_NCCL_`), or reported when the name has no counterpart. Prose that merely
mentions the variable is left alone.

With `launcher_exports` (the names torchrun sets in every worker), such a name is kept, without a
word (nothing to do), in a list, tuple or set of names that holds another of them: `for v in ("RANK",
"WORLD_SIZE", "TORCH_NCCL_ASYNC_ERROR_HANDLING"): env.pop(v, None)` strips what torchrun set,
and torchrun sets the CUDA name whatever the backend.

A rule with `off_values` names switches (`RWKV_CUDA_ON` turns a library's CUDA kernel on):
one set to an off value (`os.environ["RWKV_CUDA_ON"] = "0"`, `"RWKV_CUDA_ON=0 python ..."`)
already keeps the kernel off and is not reported.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Iterable
from functools import lru_cache

from porter.python.kinds.literal_text import literal_body
from porter.core.model import Finding, Severity
from porter.python.context import FileContext, is_str_constant
from porter.rules import Rule
from porter.rules.kinds import ContainerEnvVarParams, EnvVarParams
from porter.python.kinds.base import PythonKind


_ASSIGNED = re.compile(r"(?<![\w$])([A-Z][A-Z0-9_]*)(?==)")
# What may stand before `NAME=` in a command line: its start, a command separator, `export`
# or `env`, then other assignments. Anything else (prose such as "set X=0 first") is text.
_COMMAND_PREFIX = re.compile(r"(?:^|(?:^|\s)(?:export|env|;|&&|\|\||\|)\s+)(?:[A-Za-z_]\w*=\S*\s+)*$")


def assigned_names(command: str) -> Iterable[tuple[str, int]]:
    """(name, offset) of each variable a command line in a string assigns (`"NAME=0 python
    x.py"`, `"export NAME=0; ..."`); shell scripts read their quoted commands with it too."""
    for match in _ASSIGNED.finditer(command):
        if _COMMAND_PREFIX.search(command[: match.start(1)].lstrip()):
            yield match.group(1), match.start(1)


def screen_words(rules: list[Rule]) -> set[str]:
    return {n.rstrip("*") for r in rules for n in EnvVarParams.of(r).names}  # "*_CUDA_ON": found anywhere


def variable_table(rule: Rule) -> EnvVarParams:
    """The names, renames and notes a rule's findings about variables go by: an env-var rule's
    own, or the `names` a container-env-var rule lists itself (no renames, no notes)."""
    if isinstance(rule.params, ContainerEnvVarParams):
        return _names_only(rule.params.names)
    return EnvVarParams.of(rule)


@lru_cache(maxsize=None)
def _names_only(names: tuple[str, ...]) -> EnvVarParams:
    return EnvVarParams(names=names)


def rule_for_name(name: str, rules: list[Rule]) -> Rule | None:
    for rule in rules:
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in variable_table(rule).names):
            return rule
    return None


def report(name: str, rule: Rule, source: Rule) -> tuple[str, Severity | None]:
    """Message and severity (None: the rule's own) of a finding of `rule` that reports `name`,
    which `source` has no counterpart for. A name `source` lists in `notes` (NCCL's logging
    switches) changes nothing that runs on the target: a note saying why."""
    notes = variable_table(source).notes
    note = next((text for pattern, text in notes.items() if fnmatch.fnmatchcase(name, pattern)), None)
    if note is not None:
        return f"{name}: {note}", "info"
    summary = rule.message or rule.summary
    return (summary if name in summary else f"{name}: {summary}"), None


def variable_verdict(
    name: str, sources: list[tuple[Rule, Rule]]
) -> tuple[Rule, str | None, str, Severity | None] | None:
    """What the first (rule, source) whose source names `name` says of it, in any file type:
    (rule, the new name or None, message, severity or None for the rule's own); None when no
    source names it. `source` holds the names and renames (an env-var rule); `rule` reports."""
    for rule, source in sources:
        if rule_for_name(name, [source]) is None:
            continue
        new = renamed_variable(name, source)
        if new is not None:
            return rule, new, f"{name} -> {new}", None
        message, severity = report(name, rule, source)
        return rule, None, message, severity
    return None


def renamed_variable(name: str, rule: Rule) -> str | None:
    replace = variable_table(rule).replace
    if name in replace:
        return replace[name]
    for old, new in replace.items():
        if old.endswith("_") and name.startswith(old):
            return new + name[len(old) :]
    return None


@lru_cache(maxsize=None)
def _any_name(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regex for every name pattern (fnmatch-style, as `rule_for_name`)."""
    return re.compile("|".join(fnmatch.translate(n) for n in patterns))


def find(ctx: FileContext, rules: list[Rule]) -> Iterable[Finding]:
    """Every rename is an edit; a variable that is only reported (no counterpart) is reported
    at each mention, which the rules' `once_per_subject` makes one finding per module, at its
    first mention, with the count (porter/python/reporting.py): ten `NCCL_DEBUG` lookups in
    one test file are one thing to act on."""
    return list(_mentions(ctx, rules))


def _mentions(ctx: FileContext, rules: list[Rule]) -> Iterable[Finding]:
    any_name = _any_name(tuple(n for r in rules for n in EnvVarParams.of(r).names))
    for node in ctx.own_nodes(ast.Constant, ast.JoinedStr):
        # Cheap tests first: every name has an "_", a literal without "=" must be a name
        # itself, and the command-line form needs an "=".
        if isinstance(node, ast.Constant):
            value = node.value
            if type(value) is not str or "_" not in value or ("=" not in value and not any_name.match(value)):
                continue
        elif not any(is_str_constant(v) and "=" in v.value for v in node.values):  # (its literal parts)
            continue
        if isinstance(ctx.parents.get(node), ast.Expr):
            continue  # docstrings and bare string statements are prose
        start, end = ctx.span(node)
        source = ctx.text[start:end]
        if is_str_constant(node):  # (a Constant here holds a str: see the tests above)
            if isinstance(ctx.parents.get(node), ast.JoinedStr):
                continue  # a literal part of an f-string: scanned with the whole f-string
            rule = rule_for_name(node.value, rules)
            if rule is not None:
                body = literal_body(source)
                if (
                    body is None
                    or source[body[0] : body[1]] != node.value
                    or _switched_off(rule, _assigned_value(ctx, node))
                ):
                    continue
                if not _among_launcher_exports(ctx, node, rule):
                    yield _finding(ctx, rule, node.value, start + body[0])
                continue
        if "=" not in source:
            continue
        body = literal_body(source)
        if body is None:
            continue
        command = source[body[0] : body[1]]
        for name, offset in assigned_names(command):
            rule = rule_for_name(name, rules)
            if rule is not None and not _switched_off(rule, command[offset + len(name) + 1 :].split(" ", 1)[0]):
                yield _finding(ctx, rule, name, start + body[0] + offset)


def _among_launcher_exports(ctx: FileContext, node: ast.Constant, rule: Rule) -> bool:
    """A name the launcher sets (`launcher_exports`: torchrun exports TORCH_NCCL_ASYNC_ERROR_HANDLING
    with RANK, WORLD_SIZE, MASTER_ADDR...) in a list, tuple or set of names that holds another of
    them: a list of what torchrun set, which the code strips from a child's environment or
    hands on. torchrun sets the CUDA name on every backend, so renamed, the name would miss it."""
    exports = EnvVarParams.of(rule).launcher_exports
    parent = ctx.parents.get(node)
    if not exports or not isinstance(parent, (ast.List, ast.Tuple, ast.Set)):
        return False
    names = [e.value for e in parent.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if len(names) != len(parent.elts):
        return False
    exported = [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in exports)]
    return node.value in exported and len(exported) > 1


def _assigned_value(ctx: FileContext, node: ast.AST) -> object:
    """The literal value a variable named by `node` is set to (`os.environ[NAME] = v`,
    `os.environ.setdefault(NAME, v)`, `os.putenv(NAME, v)`, `{NAME: v}`), else None."""
    parent = ctx.parents.get(node)
    value: ast.AST | None = None
    if isinstance(parent, ast.Subscript) and parent.slice is node:
        assign = ctx.parents.get(parent)
        if isinstance(assign, ast.Assign) and parent in assign.targets:
            value = assign.value
    elif isinstance(parent, ast.Call) and len(parent.args) == 2 and parent.args[0] is node:
        if getattr(parent.func, "attr", None) in {"setdefault", "putenv"}:
            value = parent.args[1]
    elif isinstance(parent, ast.Dict):
        value = next((v for k, v in zip(parent.keys, parent.values) if k is node), None)
    return value.value if isinstance(value, ast.Constant) else None


def _switched_off(rule: Rule, value: object) -> bool:
    off = EnvVarParams.of(rule).off_values
    return bool(off) and value is not None and str(value).strip("'\"") in off


def _finding(ctx: FileContext, rule: Rule, name: str, offset: int) -> Finding:
    verdict = variable_verdict(name, [(rule, rule)])
    assert verdict is not None  # `rule` names `name`: rule_for_name chose it
    _, new, message, severity = verdict
    span = (offset, offset + len(name))
    if new is None:
        return ctx.finding(rule, span, message, subject=name, severity=severity)
    return ctx.finding(rule, span, message, replacement=new, subject=name, expect_old=name)


KIND = PythonKind("env-var", screen=screen_words, find=find)
