"""The qualified-name rules as one lookup table, and what they do to import statements.

Import statements are renamed so that their local names keep working:
`import torch.cuda as tc` -> `import torch.mlu as tc`, `from torch import cuda` ->
`from torch import mlu as cuda`, and a `from` import whose names move to different modules
is split into one import per module.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from porter.core.model import Finding
from porter.core.textio import line_ending
from porter.python.context import FileContext
from porter.rules import Rule
from porter.rules.kinds import QualifiedNameParams

_FROM_MODULE = re.compile(r"^from\s+([\w.]+)\s+import\b")


class NameTable:
    """Longest-prefix lookup over all rules of this kind."""

    def __init__(self, rules: list[Rule]) -> None:
        self.entries: dict[str, Rule] = {}
        for rule in rules:
            for name in QualifiedNameParams.of(rule).match:
                self.entries[name] = rule

    def lookup(self, qual: str) -> tuple[str, Rule] | None:
        parts = qual.split(".")
        for k in range(len(parts), 0, -1):
            prefix = ".".join(parts[:k])
            rule = self.entries.get(prefix)
            if rule is not None:
                if QualifiedNameParams.of(rule).exact and k != len(parts):
                    return None
                return prefix, rule
        return None

    def renamed(self, qual: str) -> str:
        hit = self.lookup(qual)
        if hit is None:
            return qual
        prefix, rule = hit
        replace = QualifiedNameParams.of(rule).replace or {}
        new_prefix = replace.get(prefix)
        return qual if new_prefix is None else new_prefix + qual[len(prefix) :]


def _split_import(ctx: FileContext, table: NameTable, node: ast.ImportFrom, rule: Rule) -> Finding:
    """`from torch.cuda.amp import autocast, custom_fwd` -> one import per new module."""
    start, end = ctx.span(node)
    line_start = ctx.index.starts[node.lineno - 1]
    indent = ctx.text[line_start:start]
    if indent.strip():
        return ctx.finding(
            rule,
            node,
            f"names imported from {node.module} move to different modules; split this import by hand",
            severity="warning",
            subject=node.module,
        )
    groups: dict[str, list[str]] = {}
    for alias in node.names:
        new = table.renamed(f"{node.module}.{alias.name}")
        parent, name = new.rsplit(".", 1)
        local = alias.asname or alias.name
        groups.setdefault(parent, []).append(name if name == local else f"{name} as {local}")
    newline = line_ending(ctx.text, line_start)
    statements = [f"from {parent} import {', '.join(names)}" for parent, names in groups.items()]
    return ctx.finding(
        rule,
        node,
        f"split: {'; '.join(statements)}",
        replacement=(newline + indent).join(statements),
        subject=node.module,
    )


def check_import(ctx: FileContext, table: NameTable, node: ast.Import) -> Iterable[Finding]:
    for alias in node.names:
        hit = table.lookup(alias.name)
        if hit is None:
            continue
        rule = hit[1]
        new = table.renamed(alias.name)
        if not QualifiedNameParams.of(rule).replace:
            yield ctx.finding(rule, alias, subject=alias.name)
        elif new != alias.name and alias.asname:
            # Without an alias the statement binds only the top package, which stays valid.
            start = ctx.span(alias)[0]
            if ctx.text.startswith(alias.name, start):
                yield ctx.finding(
                    rule,
                    (start, start + len(alias.name)),
                    f"{alias.name} -> {new}",
                    replacement=new,
                    subject=alias.name,
                )


def check_import_from(ctx: FileContext, table: NameTable, node: ast.ImportFrom) -> Iterable[Finding]:
    if node.level or not node.module:
        return
    new_parents: set[str] = set()
    changes: list[tuple[ast.alias, str, Rule]] = []
    for alias in node.names:
        qual = f"{node.module}.{alias.name}"
        hit = table.lookup(qual)
        if hit is None:
            new_parents.add(node.module)
            continue
        rule = hit[1]
        if not QualifiedNameParams.of(rule).replace:
            yield ctx.finding(rule, alias, subject=qual)
            new_parents.add(node.module)
            continue
        new = table.renamed(qual)
        new_parents.add(new.rsplit(".", 1)[0])
        changes.append((alias, new, rule))
    if not changes or all(f"{node.module}.{a.name}" == new for a, new, _ in changes):
        return
    start, end = ctx.span(node)
    if len(new_parents) != 1:
        # One edit, credited to every rule whose name moves (reported once per rule, applied once).
        for rule in dict.fromkeys(r for _, _, r in changes):
            yield _split_import(ctx, table, node, rule)
        return
    new_module = new_parents.pop()
    rule = changes[0][2]
    match = _FROM_MODULE.match(ctx.text[start:end])
    if new_module != node.module:
        if match is None or match.group(1) != node.module:
            yield ctx.finding(
                rule,
                node,
                f"cannot rewrite this import's layout; change {node.module} to {new_module} by hand",
                severity="warning",
                subject=node.module,
            )
            return
        yield ctx.finding(
            rule,
            (start + match.start(1), start + match.end(1)),
            f"{node.module} -> {new_module}",
            replacement=new_module,
            subject=node.module,
        )
    for alias, new, rule in changes:
        new_name = new.rsplit(".", 1)[1]
        if new_name == alias.name:
            continue
        a_start = ctx.span(alias)[0]
        if not ctx.text.startswith(alias.name, a_start):
            continue
        replacement = new_name if alias.asname else f"{new_name} as {alias.name}"
        yield ctx.finding(
            rule,
            (a_start, a_start + len(alias.name)),
            f"{node.module}.{alias.name} -> {new}",
            replacement=replacement,
            subject=f"{node.module}.{alias.name}",
        )
