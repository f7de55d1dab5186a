"""Kind `requirement-string`: what happens to a requirement, in every packaging file.

Each rule of this kind names one outcome (`on`, see porter/requirement_policy.py) and the
package table says which distributions get it. The file-type handlers for requirements
files, pyproject.toml and setup.cfg use these rules through the policy; in Python this
module is the kind: it reads setup.py's `install_requires=[...]` and
`extras_require={...: [...]}` (literals, or a module-level name passed there) and reviews
each string constant in them. A dropped requirement is commented out only when its string
is alone on its line; otherwise it is reported.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import TYPE_CHECKING

from porter.python.kinds.literal_text import literal_body
from porter.core.model import Finding
from porter.python.context import FileContext, StrConstant, is_str_constant
from porter.rules import Rule
from porter.rules.kinds import REQUIREMENT_STRING
from porter.python.kinds.base import PythonKind

if TYPE_CHECKING:
    from porter.tables.requirement_policy import RequirementPolicy

NAME = REQUIREMENT_STRING

_KEYWORDS = ("install_requires", "extras_require")
_MAX_DEPTH = 6  # nesting followed (names, A + B, dict of lists): enough for real setup.py files


def screen_words(rules: list[Rule]) -> set[str]:
    return set(_KEYWORDS)


def find(ctx: FileContext, rules: list[Rule]) -> Iterable[Finding]:
    keywords = [keyword for call in ctx.nodes(ast.Call) for keyword in call.keywords if keyword.arg in _KEYWORDS]
    if not keywords:
        return []  # most files: nothing to review, and the policy (and its tables) need not load
    from porter.tables.requirement_policy import RequirementPolicy

    policy = RequirementPolicy.build(rules, ctx.version)
    if policy is None:
        return []
    assigned = _module_assignments(ctx.tree)
    strings: dict[int, StrConstant] = {}
    for keyword in keywords:
        for node in _requirement_strings(keyword.value, assigned, _MAX_DEPTH):
            strings.setdefault(id(node), node)
    findings: list[Finding] = []
    for node in sorted(strings.values(), key=lambda n: (n.lineno, n.col_offset)):
        findings += _review(ctx, policy, node)
    return findings


def _review(ctx: FileContext, policy: RequirementPolicy, node: StrConstant) -> list[Finding]:
    from porter.tables.requirement_policy import alone_on_lines, requirement_findings

    start, end = ctx.span(node)
    source = ctx.text[start:end]
    body = literal_body(source)
    if body is None or source[body[0] : body[1]] != node.value:
        # Escapes or implicit concatenation: the text is not the value, so no edit.
        verdicts = policy.review(node.value, editable=False)
        return requirement_findings(policy, ctx.path, ctx.index, start, end, None, verdicts)
    drop_lines = alone_on_lines(ctx.index, start, end)
    return requirement_findings(policy, ctx.path, ctx.index, start + body[0], start + body[1], drop_lines)


def _module_assignments(tree: ast.Module) -> dict[str, ast.expr]:
    """The last value assigned to each plain module-level name."""
    out: dict[str, ast.expr] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            out[stmt.target.id] = stmt.value
    return out


def _requirement_strings(value: ast.expr, assigned: dict[str, ast.expr], depth: int) -> Iterable[StrConstant]:
    """String constants that are requirements in a keyword's value."""
    if depth <= 0:
        return
    if is_str_constant(value):
        yield value
    elif isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        for element in value.elts:
            yield from _requirement_strings(element, assigned, depth - 1)
    elif isinstance(value, ast.Dict):
        for element in value.values:
            yield from _requirement_strings(element, assigned, depth - 1)
    elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        yield from _requirement_strings(value.left, assigned, depth - 1)
        yield from _requirement_strings(value.right, assigned, depth - 1)
    elif isinstance(value, ast.Name) and value.id in assigned:
        yield from _requirement_strings(assigned[value.id], assigned, depth - 1)


KIND = PythonKind(REQUIREMENT_STRING, screen=screen_words, find=find)
