"""Python code embedded in other files (`python -c '...'`, notebook cells) through the Python engine.

The snippet gets exactly the findings and edits a `.py` file would (same rules, same codes);
callers map the snippet's offsets back into their own file. One-line snippets need one
adjustment: an inserted import goes right after the statement it follows (`import torch;
import torch_mlu; ...`), not onto a new line after every statement of that line.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from porter.core.edits import Found, fix
from porter.core.model import Edit, Finding
from porter.core.suppress import suppressions
from porter.core.textio import LineIndex
from porter.python.analyze import collector_paused, parse, parse_problem, rule_findings, word_screen
from porter.python.context import FileContext
from porter.rules import ActiveRules, Rule
from porter.rules.kinds import ImportInsertParams


@dataclass(frozen=True)
class Snippet:
    """What the engine made of a snippet: the findings whose edits were applied (snippet
    offsets), findings without edits (each with its snippet offset), and the converted text
    (None when nothing changed)."""

    edits: tuple[Finding, ...]
    findings: tuple[tuple[int, Finding], ...]
    new_text: str | None


def _statement_end(tree: ast.Module, index: LineIndex, anchor: str, line: int) -> int | None:
    """End offset of the statement importing `anchor` on `line`, when more code follows it there."""
    for node in tree.body:
        if isinstance(node, ast.Import) and node.lineno == line and any(a.name == anchor for a in node.names):
            end = index.node_span(node)[1]
            if index.line_text(line)[index.line_col(end)[1] - 1 :].strip():
                return end
    return None


def _place_imports(text: str, tree: ast.Module, findings: list[Finding], inserters: dict[str, Rule]) -> list[Finding]:
    """Move inserted imports that would land after a whole line of `;`-joined statements."""
    index = LineIndex(text)
    out = []
    for finding in findings:
        edit = finding.edit
        rule = inserters.get(finding.rule)
        if (
            edit is not None
            and rule is not None
            and edit.start == edit.end
            and edit.replacement.lstrip().startswith("import ")
        ):
            module, anchor = ImportInsertParams.of(rule).module, ImportInsertParams.of(rule).when_importing
            line = index.line_col(edit.start - 1 if edit.replacement[:1] in "\r\n" else edit.start)[0]
            end = _statement_end(tree, index, anchor, line)
            if end is not None:
                edit = Edit(edit.rule, end, end, f"; import {module}")
            elif "\n" not in text and edit.replacement.endswith("\n"):
                edit = Edit(edit.rule, edit.start, edit.end, f"import {module}; ")
            finding = replace(finding, edit=edit)
        out.append(finding)
    return out


def convert_snippet(path: str, text: str, rules: ActiveRules) -> Snippet | None:
    """Run the Python rules over `text`. None when it is not Python 3 (or the edits would break it)."""
    if not word_screen(rules).search(text):
        return Snippet((), (), None)
    # The syntax tree, the most a large notebook holds, is gone before the edits are applied.
    with collector_paused():
        analysed = _findings(path, text, rules)
    if analysed is None:
        return None
    findings, index = analysed
    fixed = fix(Found(text, findings, str.encode, "python", lambda new: parse_problem(new, path), index))
    if fixed.refused:
        return None
    kept = tuple((index.starts[f.line - 1] + f.col - 1, f) for f in fixed.findings)
    return Snippet(fixed.applied, kept, fixed.new_text)


def _findings(path: str, text: str, rules: ActiveRules) -> tuple[list[Finding], LineIndex] | None:
    """The findings of the Python rules in `text` and its line index; None when it does not parse."""
    try:
        tree = parse(text, path)
    except (SyntaxError, ValueError):
        return None
    ctx = FileContext.build(path, text, tree, rules.target, rules.version, rules.own_modules, rules.kept_constants)
    findings = rule_findings(ctx, rules, suppressions(text, "python"))
    inserters = {r.code: r for r in rules.of_kind("import-insert")}
    return _place_imports(text, tree, findings, inserters), ctx.index


def moved(finding: Finding, path: str, line: int, col: int) -> Finding:
    """A snippet's finding placed in the file that holds the snippet."""
    return replace(finding, path=path, line=line, col=col, end_line=None, end_col=None, edit=None)
