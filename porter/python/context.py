"""What the Python rule kinds see of one file, built in one walk of its `ast`.

The walk records each node's parent and groups nodes by type for the kinds, so no kind has
to walk the tree again.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard, TypeVar, overload
from dataclasses import dataclass, field
from functools import cached_property

from porter.core.model import Edit, Finding, Severity
from porter.python.resolve import ImportMap
from porter.rules import Rule
from porter.core.textio import LineIndex

# Fields that never hold a node, or hold shared singletons no kind looks up by type or
# parent: `ctx` (Load/Store), `op`/`ops` (Add, Not, Eq...: read from their BinOp, UnaryOp,
# BoolOp, AugAssign or Compare).
_LEAF_FIELDS = frozenset(
    {
        "id",
        "ctx",
        "attr",
        "arg",
        "name",
        "module",
        "level",
        "kind",
        "type_comment",
        "conversion",
        "is_async",
        "asname",
        "n",
        "s",
        "simple",
        "tag",
        "op",
        "ops",
    }
)
_CHILD_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}


def _child_fields(cls: type[ast.AST]) -> tuple[str, ...]:
    fields = tuple(f for f in cls._fields if f not in _LEAF_FIELDS and not (cls is ast.Constant and f == "value"))
    _CHILD_FIELDS[cls] = fields
    return fields


def _as_literal(node: ast.JoinedStr) -> ast.expr:
    """An f-string without a placeholder (`f"cuda"`, `f"cuda:0"`) as the plain literal it
    equals, at the f-string's place: every kind then sees the device string or variable name it
    is (a kind that skips f-string parts would leave it on CUDA while rewriting the block around
    it). An f-string with a placeholder stays one. (A format spec, `f"{x:>8}"`, is an f-string
    too; it is never replaced: the walk skips JoinedStr children of FormattedValue.)"""
    texts = []
    for v in node.values:
        # (a Constant part of an f-string always holds a str: the test only tells the type checker)
        if type(v) is not ast.Constant or not isinstance(v.value, str):
            return node
        texts.append(v.value)
    return ast.copy_location(ast.Constant(value="".join(texts)), node)


def is_test_function(node: ast.AST) -> bool:
    """A test (pytest's and unittest's `test*` functions and methods)."""
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")


if TYPE_CHECKING:

    class StrConstant(ast.Constant):
        """A string literal: an `ast.Constant` whose value is a str. Only the type checker
        sees this class (the parser makes plain Constants); `is_str_constant` tells one."""

        value: str

else:
    StrConstant = ast.Constant  # (so that modules can name it at run time too)


def is_str_constant(node: ast.AST | None) -> TypeGuard[StrConstant]:
    """A string literal (`"cuda"`), not a number, bytes or None."""
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


N = TypeVar("N", bound=ast.AST)
N2 = TypeVar("N2", bound=ast.AST)
N3 = TypeVar("N3", bound=ast.AST)
T = TypeVar("T")


def name_chains(
    names: list[ast.Name], bindings: dict[str, str], parents: dict[ast.AST, ast.AST]
) -> list[tuple[ast.expr, str]]:
    """The chains (FileContext.own_import_chains) rooted at these names, unsorted."""
    Attribute = ast.Attribute
    chains: list[tuple[ast.expr, str]] = []
    for name in names:
        base = bindings.get(name.id)
        if base is None:
            continue
        node: ast.expr = name  # the chain's outermost node so far: a Name, then an Attribute
        parts = [base]
        parent = parents.get(node)
        while type(parent) is Attribute and parent.value is node:
            parts.append(parent.attr)
            node, parent = parent, parents.get(parent)
        if node is name and type(name.ctx) is not ast.Load:
            continue  # `torch = None` rebinds the name; it is not a use
        chains.append((node, ".".join(parts)))
    return chains


class Rest(Protocol):
    """The other groups of a module analysed in groups (porter/python/grouped.py), whose facts
    a group reads without walking them: made once for the module, not once per group."""

    def import_chains(self, ctx: FileContext, packages: frozenset[str]) -> list[tuple[ast.expr, str]]:
        """The other groups' import chains into these packages (FileContext.import_chains_into), unsorted."""
        ...

    def module_bindings(self, ctx: FileContext) -> list[dict[str, list]]:
        """What each other group binds in the module's scope (porter/python/bindings.py)."""
        ...


@dataclass
class Walk:
    """One walk of a syntax tree: each node's parent, and the nodes by type, in walk order."""

    parents: dict[ast.AST, ast.AST]
    by_type: dict[type, list[ast.AST]]

    @classmethod
    def of(cls, tree: ast.AST) -> Walk:
        parents: dict[ast.AST, ast.AST] = {}
        by_type: dict[type, list[ast.AST]] = defaultdict(list)
        # A hand-rolled walk over only the fields that can hold nodes (see _child_fields):
        # ast.iter_child_nodes costs a generator and a getattr per field, and this is the
        # hot loop of every parsed file.
        AST, JoinedStr, FormattedValue = ast.AST, ast.JoinedStr, ast.FormattedValue
        stack: list[ast.AST] = [tree]
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            node_type = type(node)
            by_type[node_type].append(node)
            fields = _CHILD_FIELDS.get(node_type)
            if fields is None:
                fields = _child_fields(node_type)
            for name in fields:
                value = getattr(node, name)
                if type(value) is list:
                    for i, item in enumerate(value):
                        if isinstance(item, AST):
                            if type(item) is JoinedStr and node_type is not FormattedValue:
                                item = value[i] = _as_literal(item)
                            parents[item] = node
                            push(item)
                elif isinstance(value, AST):
                    if type(value) is JoinedStr and node_type is not FormattedValue:
                        value = _as_literal(value)
                        setattr(node, name, value)
                    parents[value] = node
                    push(value)
        return cls(parents, by_type)


@dataclass
class FileContext:
    path: str
    text: str
    tree: ast.Module
    index: LineIndex
    imports: ImportMap
    parents: dict[ast.AST, ast.AST]
    by_type: dict[type, list[ast.AST]]
    target: str
    version: str | None = None
    own_modules: frozenset[str] = frozenset()  # the tree's own top-level packages (ActiveRules.own_modules)
    kept_constants: frozenset[tuple[str, str]] = frozenset()  # (module, literal): ActiveRules.kept_constants
    # What readers above this layer derive from the file once and share (bindings.scope_bindings,
    # _foreign_flow.reaching), by a key of their own.
    derived: dict[Hashable, object] = field(default_factory=dict)
    # The nodes findings are looked for in (`own_nodes`): the whole module's, or a group's own
    # statements' when the module is analysed in groups (porter/python/grouped.py).
    own_by_type: dict[type, list[ast.AST]] = field(default_factory=dict)
    # For a module analysed in groups: what a kind records in one group for the decision it
    # takes for the whole module once every group is done (PythonKind.settle); None when whole.
    across_groups: dict[Hashable, set[Any]] | None = None
    # In a module analysed in groups: the first and last line of the group's own statements
    # (`owns`), and the facts every group reads the same of the whole module, computed by the
    # first group that asks (`module_fact`); None and this context's own store when whole.
    own_lines: tuple[int, int] | None = None
    module_facts: dict[Hashable, Any] = field(default_factory=dict)
    rest: Rest | None = None

    def __post_init__(self) -> None:
        if not self.own_by_type:  # analysed whole: every node is the module's own
            self.own_by_type = self.by_type

    @classmethod
    def build(
        cls,
        path: str,
        text: str,
        tree: ast.Module,
        target: str,
        version: str | None = None,
        own_modules: frozenset[str] = frozenset(),
        kept_constants: frozenset[tuple[str, str]] = frozenset(),
        index: LineIndex | None = None,
    ) -> FileContext:
        """One walk of `tree` (`index`: the text's LineIndex when the caller has it already)."""
        walk = Walk.of(tree)
        return cls.assembled(
            path,
            text,
            tree,
            walk.parents,
            walk.by_type,
            walk.by_type,
            target,
            version,
            own_modules,
            kept_constants,
            index,
        )

    @classmethod
    def assembled(
        cls,
        path: str,
        text: str,
        tree: ast.Module,
        parents: dict[ast.AST, ast.AST],
        by_type: dict[type, list[ast.AST]],
        own_by_type: dict[type, list[ast.AST]],
        target: str,
        version: str | None = None,
        own_modules: frozenset[str] = frozenset(),
        kept_constants: frozenset[tuple[str, str]] = frozenset(),
        index: LineIndex | None = None,
        across_groups: dict[Hashable, set[Any]] | None = None,
        own_lines: tuple[int, int] | None = None,
        module_facts: dict[Hashable, Any] | None = None,
        rest: Rest | None = None,
    ) -> FileContext:
        """A context from walks already made: the whole module's (`by_type`), and the nodes the
        kinds look for findings in (`own_by_type`: the same for a module analysed whole; a
        group's own statements for one analysed in groups, porter/python/grouped.py)."""
        imports = ImportMap.from_nodes(by_type.get(ast.Import, []) + by_type.get(ast.ImportFrom, []), tree.body)
        return cls(
            path,
            text,
            tree,
            index or LineIndex(text),
            imports,
            parents,
            by_type,
            target,
            version,
            own_modules,
            kept_constants,
            own_by_type=own_by_type,
            across_groups=across_groups,
            own_lines=own_lines,
            module_facts={} if module_facts is None else module_facts,
            rest=rest,
        )

    @cached_property
    def own_import_chains(self) -> list[tuple[ast.expr, str]]:
        """Every use of an imported name among the nodes findings are looked for in (see
        `own_nodes`): the outermost node of each Name/Attribute chain rooted at one
        (`torch.cuda.synchronize` of `torch.cuda.synchronize()`), with the qualified name it
        resolves to, in source order.

        Built from the Name nodes whose identifier an import binds, climbing to the end of
        their chains: most names in a file are locals, so this skips nearly every node.
        Every kind that looks for qualified names reads this one list.
        """
        chains = name_chains(self.own_nodes(ast.Name), self.imports.bindings, self.parents)
        chains.sort(key=lambda c: (c[0].lineno, c[0].col_offset))
        return chains

    def import_chains_into(self, packages: frozenset[str]) -> list[tuple[ast.expr, str]]:
        """The uses of the whole module (`own_import_chains`, and in a module analysed in groups
        the other groups', made once by `rest`) whose qualified name is in one of these
        top-level packages, in source order: what a kind follows across the module (a
        bitsandbytes object made in one function, moved in another)."""
        chains = [c for c in self.own_import_chains if c[1].split(".", 1)[0] in packages]
        if self.rest is not None:
            chains += self.rest.import_chains(self, packages)
            chains.sort(key=lambda c: (c[0].lineno, c[0].col_offset))
        return chains

    @cached_property
    def test_functions(self) -> list[tuple[int, int, str]]:
        """(first line, last line, name) of each test function, its decorators included."""
        spans = []
        for fn in self.own_nodes(ast.FunctionDef, ast.AsyncFunctionDef):  # (findings are at own nodes)
            if is_test_function(fn):
                first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
                spans.append((first, fn.end_lineno or fn.lineno, fn.name))
        return spans

    def in_annotation(self, node: ast.AST) -> bool:
        """Whether `node` is (in) a type annotation of a parameter, variable or return value."""
        child, parent = node, self.parents.get(node)
        while parent is not None:
            if isinstance(parent, (ast.arg, ast.AnnAssign)) and parent.annotation is child:
                return True
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and parent.returns is child:
                return True
            if isinstance(parent, (ast.stmt, ast.arg)):
                return False
            child, parent = parent, self.parents.get(parent)
        return False

    @overload
    def nodes(self, kind: type[N], /) -> list[N]: ...
    @overload
    def nodes(self, kind: type[N], kind2: type[N2], /) -> list[N | N2]: ...
    @overload
    def nodes(self, kind: type[N], kind2: type[N2], kind3: type[N3], /) -> list[N | N2 | N3]: ...
    @overload
    def nodes(self, *kinds: type[ast.AST]) -> list[ast.AST]: ...
    def nodes(self, *kinds: type[ast.AST]) -> list[Any]:
        """The file's nodes of these types (of up to three types: typed as them)."""
        out: list[ast.AST] = []
        for t in kinds:
            out.extend(self.by_type.get(t, ()))
        return out

    @overload
    def own_nodes(self, kind: type[N], /) -> list[N]: ...
    @overload
    def own_nodes(self, kind: type[N], kind2: type[N2], /) -> list[N | N2]: ...
    @overload
    def own_nodes(self, kind: type[N], kind2: type[N2], kind3: type[N3], /) -> list[N | N2 | N3]: ...
    @overload
    def own_nodes(self, *kinds: type[ast.AST]) -> list[ast.AST]: ...
    def own_nodes(self, *kinds: type[ast.AST]) -> list[Any]:
        """The nodes of these types that findings are looked for in: the file's (`nodes`), or,
        in a module analysed in groups, those of the group's own statements. `nodes` is for
        what a kind reads of the whole module (bindings, decorators, module-level tests)."""
        out: list[ast.AST] = []
        for t in kinds:
            out.extend(self.own_by_type.get(t, ()))
        return out

    def own_and_top_level(self, kind: type[N]) -> list[N]:
        """The nodes of this type findings are looked for in (`own_nodes`) and the module's
        top-level statements of this type, in the order `nodes` lists them: what a group of a
        module analysed in groups shares with the others is the module's body."""
        if self.own_lines is None:
            return self.nodes(kind)
        own, out, placed = self.own_nodes(kind), [], False
        for stmt in reversed(self.tree.body):  # (a walk pops the module's statements last first)
            if self.owns(stmt):
                if not placed:
                    out += own
                    placed = True
            elif type(stmt) is kind:
                out.append(stmt)
        return out if placed else out + own

    def owns(self, node: ast.AST) -> bool:
        """Whether findings are looked for at `node`: always in a module analysed whole; in a
        group, at the nodes of its own statements (`own_nodes`)."""
        if self.own_lines is None:
            return True
        first, last = self.own_lines
        return first <= getattr(node, "lineno", 0) <= last

    def module_fact(self, key: Hashable, compute: Callable[[], T]) -> T:
        """`compute()`, once per module: a fact of the whole module that the skeleton of a module
        analysed in groups shows whole (porter/python/grouped.py), so every group's is the same."""
        if key not in self.module_facts:
            self.module_facts[key] = compute()
        return self.module_facts[key]

    def span(self, node: ast.AST) -> tuple[int, int]:
        return self.index.node_span(node)

    def is_bare_string_statement(self, node: ast.AST) -> bool:
        """A string constant that is a whole statement: a docstring or a comment-like string."""
        return isinstance(self.parents.get(node), ast.Expr)

    def finding(
        self,
        rule: Rule,
        node_or_span,
        message: str | None = None,
        *,
        replacement: str | None = None,
        edit_span: tuple[int, int] | None = None,
        suggestion: str | None = None,
        subject: str | None = None,
        severity: Severity | None = None,
        expect_old: str | None = None,
    ) -> Finding:
        """A finding at a node (or a (start, end) span); with an edit when `replacement` is given.

        With `expect_old`, the edit is only made if the span really holds that text: a
        safety net against wrong positions (the ast's positions inside f-strings vary by
        Python version); otherwise the finding asks for a manual change.
        """
        start, end = node_or_span if isinstance(node_or_span, tuple) else self.span(node_or_span)
        if replacement is not None and expect_old is not None and self.text[start:end] != expect_old:
            replacement = None
            message = f"{message or rule.summary} (porter could not locate the text safely; change it by hand)"
            severity = "warning"
        edit_span = edit_span or (start, end)
        return span_finding(
            rule,
            self.path,
            self.index,
            (start, end),
            message,
            replacement=replacement,
            edit_span=edit_span,
            suggestion=suggestion,
            subject=subject,
            severity=severity,
        )


def span_finding(
    rule: Rule,
    path: str,
    index: LineIndex,
    span: tuple[int, int],
    message: str | None = None,
    *,
    replacement: str | None = None,
    edit_span: tuple[int, int] | None = None,
    suggestion: str | None = None,
    subject: str | None = None,
    severity: Severity | None = None,
) -> Finding:
    """A finding of `rule` at a character span of a file (every file type makes them here);
    with an edit of `edit_span` (default: the span) when `replacement` is set."""
    start, end = span
    line, col = index.line_col(start)
    end_line, end_col = index.line_col(end)
    edit = None
    if replacement is not None:
        es, ee = edit_span or span
        edit = Edit(rule.code, es, ee, replacement)
    return Finding(
        rule=rule.code,
        severity=severity or rule.severity,
        path=path,
        line=line,
        col=col,
        message=message or rule.message or rule.summary,
        suggestion=suggestion if suggestion is not None else rule.suggestion,
        edit=edit,
        end_line=end_line,
        end_col=end_col,
        subject=subject,
    )
