"""A very large module analysed a group of top-level statements at a time, beside a skeleton
of the rest, so that memory holds one group's syntax tree instead of the whole module's.

CPython's syntax tree costs about 300 bytes a node and a module has about 0.2 nodes per byte
of code: a 50 MB module's tree is 3.3 GB, held while the rules run. Analysed in groups of a
few megabytes, only one group's statements are whole at a time; every other top-level
statement is there as its skeleton (`hollow`), which keeps what the rules read across
statements:

- every statement outside a function or class body, whole (the module's own bindings,
  flags, `if` tests and imports, which name resolution and the string and receiver reading
  follow);
- every function and class header: name, decorators (`@triton.jit`), bases, and its first
  and last line (the spans the import insertion reads); a function's parameters and return
  annotation are dropped (only its own group reads them);
- inside a function, the imports with the statements that hold them (`try:` with its
  handlers, `if TYPE_CHECKING:`), nested functions and classes as skeletons, and assignments
  that swap a function into an imported module (what the kernel-module rule reads);
- inside a class, the statements of its body (class attributes bind in the module scope as
  porter reads it), its methods as skeletons.

The plan parses each group once to make its skeleton (`plan`); the skeleton is walked once
(`Skeleton`). A group is then parsed again, whole, and its context walks only its own
statements: the kinds look for findings in its own nodes (FileContext.own_nodes) and read
the rest from the skeleton, whose import chains and module-scope bindings are made once per
group of it (FileContext.rest). Each group's findings are kept for the lines of its own
statements, so every finding comes from the one group that holds its node whole. What a kind
decides for the whole module is decided once: from the skeleton, which every group reads the
same (FileContext.module_fact: whether the module is a kernel module, its first import of
each package), or at the end, with every group's findings (porter/python/kinds/base.py
PythonKind.settle and whole_module: an import reported at a use in another group, a
variable's mentions, the import of the vendor package). Where the run leaves the file more
than one process (porter/core/forked.py), the plan's parses and the groups go side by side.

Exact: with every top-level statement its own group, the rule fixtures and seven real trees
find what one analysis of the whole finds (tests/test_grouped_analysis.py,
benchmarks/grouped_vs_whole.py).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from collections import defaultdict
from dataclasses import dataclass
from typing import cast

from porter.python import pieces
from porter.python.bindings import bindings_of
from porter.python.context import FileContext, Rest, Walk, name_chains

# A module up to this size is analysed whole (the default --max-file-size is 10 MB), a larger
# one in groups of about GROUP_CHARS. Measured on the 50 MB synthetic module, 2 cores: whole,
# 3.7 GiB; groups of 4 MB side by side, 2.3 GB for both processes together; of 2 MB, 1.9 GB and
# no slower; of 1 MB, 1.6 GB but 30% more CPU (each group reads the rest of the skeleton).
WHOLE_CHARS = 12 << 20
GROUP_CHARS = 2 << 20

# What a function skeleton takes: no parameter (nothing reads another group's parameters)
_NO_ARGUMENTS = ast.arguments(
    posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
_BLOCKS = ("body", "orelse", "finalbody")  # the statement lists of a compound statement (handlers stay whole)


@dataclass
class Group:
    """One group's statements, whole, and where they sit in the module's skeleton."""

    start: int  # character offset of the group's text
    end: int
    lines_before: int  # lines of the text before it (the parse of the group is placed after them)
    first: int  # index of its first statement in the skeleton
    count: int  # how many top-level statements it holds


@dataclass
class Plan:
    """Where the groups are, and the skeleton of every top-level statement."""

    groups: list[Group]
    skeleton: list[ast.stmt]


def plan(
    text: str, path: str, parse_whole: Callable[[str, str], ast.Module], size: int | None = None, processes: int = 1
) -> Plan | None:
    """The groups of `text` and its skeleton, from one parse of each group (in up to
    `processes` processes, each sending back its groups' skeletons); None when the pieces
    cannot tell (a group never parses alone): then only the whole can be analysed."""
    size = size or GROUP_CHARS

    def hollowed(piece: str, lines_before: int) -> list[ast.stmt] | None:
        try:
            body = parse_whole("\n" * lines_before + piece, path).body
        except Exception:  # SyntaxError, null bytes, too deep: the whole decides
            return None
        return [hollow(stmt) if isinstance(stmt, _DEFS) else stmt for stmt in body]

    parts = pieces.checked(text, size, hollowed, processes)
    if parts is None:
        return None
    groups: list[Group] = []
    skeleton: list[ast.stmt] = []
    for start, end, lines_before, body in parts:
        if body:  # (a piece of comments alone has nothing to analyse)
            groups.append(Group(start, end, lines_before, len(skeleton), len(body)))
        skeleton.extend(body)
    return Plan(groups, skeleton)


@dataclass
class GroupView:
    """What a group's context is made of (porter/python/context.py FileContext.assembled)."""

    tree: ast.Module  # its own statements whole, every other one's skeleton
    parents: dict[ast.AST, ast.AST]
    by_type: dict[type, list[ast.AST]]  # of the whole module, in the order one walk lists them
    own_by_type: dict[type, list[ast.AST]]  # of its own statements
    rest: Rest | None  # the other groups' facts, made once (None for the skeleton itself)


class Skeleton:
    """The skeleton walked once: each group's hollow statements' walk (porter/python/context.py
    Walk), so that a group's context walks only its own statements and takes the rest from here,
    with what the kinds read of the other groups (their import chains, their bindings in the
    module's scope) made once per group of the skeleton, not once per group analysed."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.modules = [_module(plan.skeleton[g.first : g.first + g.count]) for g in plan.groups]
        self.walks = [Walk.of(module) for module in self.modules]
        self.parents: dict[ast.AST, ast.AST] = {}
        for walk in self.walks:
            self.parents.update(walk.parents)
        self._chains: dict[int | tuple[int, frozenset[str]], list[tuple[ast.expr, str]]] = {}
        self._bindings: dict[int, dict[str, list]] = {}

    @contextmanager
    def whole(self) -> Iterator[GroupView]:
        """The module of every statement's skeleton."""
        with self._placed(_module(list(self.plan.skeleton)), None, None) as view:
            yield view

    @contextmanager
    def group(self, index: int, own: list[ast.stmt]) -> Iterator[GroupView]:
        """Group `index`'s module: its own statements whole, every other one's skeleton."""
        g = self.plan.groups[index]
        tree = _module([*self.plan.skeleton[: g.first], *own, *self.plan.skeleton[g.first + g.count :]])
        with self._placed(tree, index, Walk.of(_module(own))) as view:
            yield view

    @contextmanager
    def _placed(self, tree: ast.Module, index: int | None, own: Walk | None) -> Iterator[GroupView]:
        # The skeleton's parents serve every group: the group's own are added for its time
        # (a copy per group cost a skeleton's worth of memory, and its time).
        parents = self.parents
        # The nodes by type in the order one walk of `tree` lists them: the walk pops the
        # module's statements last first (porter/python/context.py Walk.of).
        by_type: dict[type, list[ast.AST]] = defaultdict(list)
        for h in reversed(range(len(self.walks))):
            part = own if h == index and own is not None else self.walks[h]
            for node_type, nodes in part.by_type.items():
                if node_type is not ast.Module:
                    by_type[node_type].extend(nodes)
        by_type[ast.Module] = [tree]
        own_by_type = by_type
        rest: Rest | None = None
        if own is not None and index is not None:
            parents.update(own.parents)
            own_by_type = {t: nodes for t, nodes in own.by_type.items() if t is not ast.Module}
            rest = _OtherGroups(self, index)
        for stmt in tree.body:
            parents[stmt] = tree
        try:
            yield GroupView(tree, parents, by_type, own_by_type, rest)
        finally:
            for node in own.parents if own is not None else ():
                parents.pop(node, None)
            for stmt in tree.body:
                parents.pop(stmt, None)

    def chains(self, h: int, bindings: dict[str, str], packages: frozenset[str]) -> list[tuple[ast.expr, str]]:
        """Group `h`'s skeleton's import chains into `packages` (the imports bind the same names
        in every group)."""
        key = (h, packages)
        if key not in self._chains:
            if h not in self._chains:
                names = cast("list[ast.Name]", self.walks[h].by_type.get(ast.Name, []))
                self._chains[h] = name_chains(names, bindings, self.parents)
            self._chains[key] = [c for c in self._chains[h] if c[1].split(".", 1)[0] in packages]
        return self._chains[key]

    def module_bindings(self, h: int) -> dict[str, list]:
        """What group `h`'s skeleton binds in the module's scope (its functions' scopes are the
        group's own business: no other group reads inside them)."""
        if h not in self._bindings:
            walk, module = self.walks[h], self.modules[h]
            made = bindings_of(lambda *types: [n for t in types for n in walk.by_type.get(t, ())], self.parents, module)
            self._bindings[h] = made.get(id(module), {})
        return self._bindings[h]


class _OtherGroups:
    """The Rest (porter/python/context.py) of group `index`: every other group's skeleton facts."""

    def __init__(self, skeleton: Skeleton, index: int) -> None:
        self.skeleton, self.index = skeleton, index

    def _others(self) -> list[int]:
        return [h for h in range(len(self.skeleton.walks)) if h != self.index]

    def import_chains(self, ctx: FileContext, packages: frozenset[str]) -> list[tuple[ast.expr, str]]:
        return [chain for h in self._others() for chain in self.skeleton.chains(h, ctx.imports.bindings, packages)]

    def module_bindings(self, ctx: FileContext) -> list[dict[str, list]]:
        return [self.skeleton.module_bindings(h) for h in self._others()]


def own_statements(
    plan: Plan, index: int, text: str, path: str, parse_whole: Callable[[str, str], ast.Module]
) -> list[ast.stmt]:
    """Group `index`'s statements, whole (parsed again: the plan kept only their skeletons)."""
    g = plan.groups[index]
    return parse_whole("\n" * g.lines_before + text[g.start : g.end], path).body


def _module(body: list[ast.stmt]) -> ast.Module:
    return ast.Module(body=body, type_ignores=[])


def owned_lines(statements: list[ast.stmt]) -> tuple[int, int]:
    """The first line (decorators included) and the last of a run of statements."""
    first = statements[0]
    decorators = getattr(first, "decorator_list", [])
    return min([first.lineno, *(d.lineno for d in decorators)]), statements[-1].end_lineno or statements[-1].lineno


def hollow(node: Definition) -> Definition:
    """A function or class reduced to what other statements' rules read of it (see the module's
    docstring), in place; its body is never empty (a `pass` at its first line stands for it)."""
    if isinstance(node, ast.ClassDef):
        node.body = [hollow(s) if isinstance(s, _DEFS) else s for s in node.body]
    else:
        node.body = _kept(node.body)
        node.args = _NO_ARGUMENTS
        node.returns = None
    if not node.body:
        node.body = [_passed(node)]
    return node


def _passed(node: ast.stmt) -> ast.Pass:
    """A `pass` at `node`'s first line, standing for the body it had."""
    return ast.Pass(
        lineno=node.lineno, col_offset=node.col_offset, end_lineno=node.lineno, end_col_offset=node.col_offset
    )


def _kept(statements: list[ast.stmt]) -> list[ast.stmt]:
    """Of a function body: imports and what holds them, nested definitions as skeletons, and
    assignments of a name to an attribute (a function swapped into a module)."""
    out: list[ast.stmt] = []
    for stmt in statements:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            out.append(stmt)
        elif isinstance(stmt, _DEFS):
            out.append(hollow(stmt))
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name):
            if any(isinstance(t, ast.Attribute) for t in stmt.targets):
                out.append(stmt)
        else:
            kept = False
            for name in _BLOCKS:
                block = getattr(stmt, name, None)
                if isinstance(block, list) and block:
                    inner = _kept(block)
                    kept = kept or bool(inner)
                    setattr(stmt, name, inner)
            # A `try:` that holds an import keeps its handlers whole: whether they carry on
            # without the package makes the import optional (kinds/_optional.py).
            if kept:
                if not getattr(stmt, "body", True):  # a kept `try:` or `if` needs a body to be Python
                    setattr(stmt, "body", [_passed(stmt)])
                out.append(stmt)
    return out
