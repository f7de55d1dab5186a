"""Kind `library-import`: importing a package that does not (all) run on the target.

What runs where lives in one place, the package table `op_tables/<target>/packages.toml`;
this kind reports each import of a package whose action there is in `actions`, with the
table's reason and suggestion.

How much the import matters is read from the code around it (kinds/_optional.py): an
import under `if TYPE_CHECKING:` never runs and is not reported; one the module already
runs without (guarded by `try: ... except ImportError` or `if is_vllm_available():`) is an
`info` note, outside the default set: an inference-engine adapter that imports its engine
only when it is installed, or an environment report that prints a package's version, has
nothing to port. So is one under a feature switch (`if args.use_8bit_adam: import
bitsandbytes`, diffusers' training examples): the module runs while the switch is off, and
the note says to leave it off. So is one inside a `test_*` function: the test of a CUDA-only stack cannot
run on the target, and its module still imports (a top-level import would break the
collection of the whole test file and is reported). The package's requirement line and the
code that uses it are what the user acts on.

A package the tree itself provides (GPT-NeoX's own `megatron/`, Megatron-LM's namespace
`megatron/core/`, porter/engine/own_modules.py) is the project's code: its imports are never
reported. Nor is an import of the package a file sits in, wherever the tree holds it (a copy
of Megatron-LM vendored under `third_party/`: its `megatron/core/` modules import
`megatron.core`): it is that copy, found first when it runs.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from porter.core.model import Finding
from porter.tables.packages import load_package_table
from porter.python.context import FileContext
from porter.python.kinds._optional import how_needed
from porter.rules import Rule
from porter.rules.kinds import LibraryImportParams
from porter.python.kinds.base import PythonKind
from porter.rules.kinds import LIBRARY_IMPORT


def screen_imports(rules: list[Rule]) -> set[str]:
    """The packages the kind reports: it reads import statements only, so a file that names
    one in a string or a help text, and imports none, is not parsed for it."""
    words: set[str] = set()
    for rule in rules:
        table = load_package_table(rule.target)
        entries = [entry.on_line(line) for entry in table.entries.values() for line in ("", *dict(entry.lines))]
        words |= {
            name.split(".", 1)[0]
            for entry in entries
            if entry.action in LibraryImportParams.of(rule).actions
            for name in entry.import_names
        }
    return words


def is_own(module: str, path: str, own_modules: frozenset[str]) -> bool:
    """Whether `module` is the tree's own code: one of its packages (by top-level or dotted
    name) or a namespace the tree's packages are in (`import megatron` beside its own
    `megatron/core/`), or the package `path` lies in (its first two names are folders of the
    path: one folder alone could be a folder of examples named for the library they use)."""
    parts = module.split(".")
    if parts[0] in own_modules or ".".join(parts[:2]) in own_modules:
        return True
    if len(parts) == 1 and any(own.startswith(f"{module}.") for own in own_modules):
        return True
    folders = path.split("/")[:-1]
    return len(parts) > 1 and any(folders[i : i + 2] == parts[:2] for i in range(len(folders) - 1))


def find(ctx: FileContext, rules: list[Rule]) -> list[Finding]:
    """One finding per package and file, at its first import that must succeed (else at its
    first optional one): ten imports of triton in one kernel file are one thing to act on
    (the count is in the message). (Decided from every import of the module, which a module
    analysed in groups shows whole to every group: once.)"""
    return ctx.module_fact("library-import", lambda: list(_first_imports(ctx, rules)))


def _first_imports(ctx: FileContext, rules: list[Rule]) -> Iterable[Finding]:
    for rule in rules:
        table = load_package_table(rule.target).for_line(ctx.version)
        first: dict[str, tuple[ast.AST, str, str, str | None]] = {}
        required: dict[str, tuple[ast.AST, str]] = {}
        count: dict[str, int] = {}
        nodes = sorted(ctx.nodes(ast.Import, ast.ImportFrom), key=lambda n: (n.lineno, n.col_offset))
        for node in nodes:
            modules: list[tuple[str, ast.AST]]  # (module, the node to report it at)
            if isinstance(node, ast.ImportFrom):
                if node.level or not node.module:
                    continue
                modules = [(node.module, node)]
            else:
                modules = [(alias.name, alias) for alias in node.names]
            need = switch = None
            for module, where in modules:
                if is_own(module, ctx.path, ctx.own_modules):
                    continue  # the project's own package of that name, not the library
                entry = table.by_import(module)
                if entry is None or entry.action not in LibraryImportParams.of(rule).actions or entry.imports_run:
                    continue
                if need is None:
                    need, switch = how_needed(ctx, node)
                if need == "never":
                    continue
                first.setdefault(entry.name, (where, module, need, switch))
                if need == "required":
                    required.setdefault(entry.name, (where, module))
                count[entry.name] = count.get(entry.name, 0) + 1
        for name, (where, module, need, switch) in first.items():
            entry = table.entries[name]
            more = count[name] - 1
            also = f" ({more} more import{'s' if more > 1 else ''} of it in this file)" if more else ""
            if name in required:
                where, module = required[name]
                yield ctx.finding(
                    rule,
                    where,
                    f"imports {module} ({entry.name}): {entry.reason}{also}",
                    suggestion=entry.suggestion,
                    severity=entry.severity,
                    subject=entry.name,
                )
                continue
            suggestion = entry.suggestion
            if need == "test":
                message = (
                    f"imports {module} ({entry.name}) in a test that needs it: the test cannot run on "
                    f"{ctx.target.upper()}, nothing in it to port: {entry.reason}{also}"
                )
                suggestion = f"Run this test where {entry.name} runs, or skip it on {ctx.target.upper()}."
            elif need == "switched":
                message = (
                    f"imports {module} ({entry.name}) only when `{switch}` is on: the module runs without it "
                    f"while that setting is off; on {ctx.target.upper()} leave it off: {entry.reason}{also}"
                )
            elif need == "elsewhere":
                message = (
                    f"imports {module} ({entry.name}) only where another vendor's accelerator is in use "
                    f"(under a test for it): that code never runs on {ctx.target.upper()}: {entry.reason}{also}"
                )
                suggestion = None  # nothing to change in code the target never runs
            else:
                message = (
                    f"optional import of {module} ({entry.name}): the module runs without it (the import is "
                    f"guarded); what uses it does not run on {ctx.target.upper()}: {entry.reason}{also}"
                )
            yield ctx.finding(rule, where, message, suggestion=suggestion, severity="info", subject=entry.name)


KIND = PythonKind(LIBRARY_IMPORT, screen=screen_imports, screens_imports=True, find=find)
