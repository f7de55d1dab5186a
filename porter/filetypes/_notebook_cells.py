"""The code of notebook cells through porter's engines: Python cells, magics and shell lines.

All Python cells are converted as one module (in order, as the kernel runs them), so
`import torch_mlu` lands once, after the notebook's first `import torch`, whichever cell
uses CUDA. IPython syntax is masked before parsing (a magic becomes `0#...` of the same
length, a statement and a comment): `!cmd` lines and `%%bash` / `%%writefile x.sh` cells go
through the shell checks, `%env NAME=value` renames like a shell assignment, other magics
are left as they are. Cells that still do not parse as Python (help syntax `obj?`, other
languages) are left unchanged, and reported (PRT004) when they hold a word a Python rule looks
for (the rules' word screen): a cell that is only `pip install -e .` without its `!` (ms-swift's
example notebooks) has nothing to port, and is left unchanged silently.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from porter.core.model import Finding
from porter.core.textio import LineIndex
from porter.core.wordregex import WordScreen
from porter.filetypes._common import TextFile, matched
from porter.filetypes._shell_syntax import Script
from porter.filetypes.shell import check_script
from porter.python.analyze import parse, word_screen
from porter.python.opscan import KIND as OP_KIND
from porter.python.snippet import convert_snippet
from porter.rules import ActiveRules, Rule
from porter.rules.kinds import Matcher

# A line magic or shell escape at the start of a line, optionally assigned: `x = !nvidia-smi`.
_LINE_MAGIC = re.compile(r"^([ \t]*)(?:[A-Za-z_]\w*[ \t]*=[ \t]*)?(!!?|%(?=[A-Za-z]))", re.M)
_ENV = re.compile(r"%(?:env|set_env)[ \t]+([A-Za-z_]\w*)")
# Line magics that run a package manager as its shell command would (`%pip install x`).
_INSTALL_MAGIC = re.compile(r"%(?:pip|conda|mamba)\b")
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})


@dataclass(frozen=True)
class CellEdit:
    """An edit of one cell's code (offsets into the cell), with the finding that made it."""

    cell: int
    start: int
    end: int
    rule: str
    replacement: str
    finding: Finding


@dataclass(frozen=True)
class CellFinding:
    cell: int
    offset: int
    finding: Finding


def _cell_kind(first_line: str) -> str:
    """'python', 'shell' or 'other' for a cell whose first line is a `%%` cell magic."""
    words = first_line[2:].split()
    magic, args = (words[0], words[1:]) if words else ("", [])
    if magic in ("bash", "sh") or (magic == "script" and args[:1] in (["bash"], ["sh"])):
        return "shell"
    if magic == "writefile" and args:
        return "python" if args[-1].endswith(".py") else "shell" if args[-1].endswith((".sh", ".bash")) else "other"
    return "python" if magic in _PYTHON_CELL_MAGICS else "other"


def _mask(text: str, cell: int, shell: list[tuple[int, int, str]]) -> str:
    """The cell with magics turned into `0` and a comment, of the same length; shell parts noted
    in `shell`."""
    chars = list(text)
    if text.startswith("%%"):
        chars[0] = "#"
    for m in _LINE_MAGIC.finditer(text):
        at = m.start(2)
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        if m.group(2).startswith("!"):
            while text[:end].endswith("\\") and end < len(text):  # `!pip install a \` + continuation lines
                line = end + 1
                end = text.find("\n", line)
                end = len(text) if end < 0 else end
                if line < end:
                    chars[line] = "#"  # the continuation is shell too: a comment for Python
            shell.append((cell, m.end(2), text[m.end(2) : end]))
        elif _INSTALL_MAGIC.match(text, at):  # `%pip install x`: the command `pip install x`
            shell.append((cell, m.end(2), text[m.end(2) : end]))
        else:
            env = _ENV.match(text, at, end)
            if env:  # `%env NAME=value` / `%env NAME value`: the name, as a shell assignment
                shell.append((cell, env.start(1), env.group(1) + "="))
        # `0#...`: an expression statement and a comment, of the magic's length, so that a magic
        # that is the whole body of a block (`if x:\n  %pip install y`) still leaves one
        # statement there (a comment alone would not), and `x = !cmd` still assigns.
        chars[at : at + 2] = "0#" if at + 1 < end else "0"
    return "".join(chars)


@dataclass(frozen=True)
class UnreadCell:
    """A code cell that does not parse as Python once IPython syntax is masked: what the
    notebook's own kinds (NOTEBOOK_KINDS) read, one cell at a time, as the cells are sorted.
    Its parseable Python and shell code go through PYTHON_KINDS and SHELL_KINDS instead."""

    path: str
    text: str
    why: str  # where and why it does not parse
    rules: ActiveRules


def unread_findings(cell: UnreadCell, rules: list[Rule]) -> Iterator[Finding]:
    """The one finding for a cell porter cannot read as Python, if it holds something a rule
    looks for (a cell that is only `pip install -e .` has nothing to port)."""
    if _looked_at(cell.text, cell.rules):
        rule = rules[0]
        message = f"{rule.summary} ({cell.why})"
        yield Finding(rule.code, rule.severity, cell.path, 1, 1, message, rule.suggestion, subject="cell")


# The kinds a notebook's own cells are matched with (porter/rules/kinds.py's Matcher), in the
# order their findings are listed: adding a kind is its matcher and a line.
NOTEBOOK_KINDS: tuple[Matcher[UnreadCell], ...] = (Matcher("notebook-cell", unread_findings),)


_TORCH = WordScreen(["torch"])


def _looked_at(text: str, rules: ActiveRules) -> bool:
    """Whether a cell holds a word some rule of the target looks for (the Python rules' word
    screen), or `torch` where the target has an op scan (it judges every torch API a notebook
    uses). The target's rule set, not the run's selection: `--select PRT004` asks about these
    cells all the same."""
    ruleset = rules.ruleset
    return word_screen(ruleset).search(text) or bool(ruleset.of_kind(OP_KIND) and _TORCH.search(text))


def _multiline_strings(tree: ast.Module, text: str) -> list[tuple[int, int]]:
    """Spans of strings that cover several lines: a `!` line inside one is text, not a command."""
    index = LineIndex(text)
    return [
        index.node_span(n)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Constant, ast.JoinedStr)) and n.end_lineno != n.lineno
    ]


def convert_cells(path: str, cells: list[str], rules: ActiveRules) -> tuple[list[CellEdit], list[CellFinding]]:
    """Edits and findings (in each cell's own coordinates) for the code cells of a notebook."""
    shell: list[tuple[int, int, str]] = []
    python: list[tuple[int, str]] = []
    unread: list[tuple[int, Finding]] = []
    for i, text in enumerate(cells):
        first = text.split("\n", 1)[0]
        kind = _cell_kind(first) if first.startswith("%%") else "python"
        if kind == "shell":
            shell.append((i, len(first) + 1, text[len(first) + 1 :]))
        elif kind == "python":
            magics: list[tuple[int, int, str]] = []
            masked = _mask(text, i, magics)
            try:
                tree = parse(masked, path)
            except (SyntaxError, ValueError) as exc:
                why = f"line {getattr(exc, 'lineno', '?')}: {getattr(exc, 'msg', exc)}"
                unread += [(i, f) for f in matched(NOTEBOOK_KINDS, UnreadCell(path, text, why, rules), rules)]
                continue
            inside = _multiline_strings(tree, masked)
            shell += [f for f in magics if not any(a <= f[1] < b for a, b in inside)]
            python.append((i, masked))
    edits: list[CellEdit] = []
    found: list[CellFinding] = [CellFinding(cell, 0, f) for cell, f in unread]
    _python(path, python, rules, edits, found)
    no_setup = tuple(r.code for r in rules.of_kind("shell-env-setup"))  # one per notebook line is noise
    shell_rules = rules.narrowed(no_setup)
    for cell, at, fragment in shell:
        script = Script(fragment)
        if script.error_line is not None:
            continue
        frag = TextFile(path, fragment, LineIndex(fragment), False)
        for f in check_script(frag, script, shell_rules):
            offset = frag.index.starts[f.line - 1] + f.col - 1
            if f.edit is not None:
                edits.append(CellEdit(cell, at + f.edit.start, at + f.edit.end, f.rule, f.edit.replacement, f))
            else:
                found.append(CellFinding(cell, at + offset, f))
    return edits, found


def _python(
    path: str, parts: list[tuple[int, str]], rules: ActiveRules, edits: list[CellEdit], found: list[CellFinding]
) -> None:
    """Convert the Python cells together; if the joined module does not parse, one by one."""
    groups = [parts]
    joined = "\n".join(text for _, text in parts)
    result = convert_snippet(path, joined, rules) if parts else None
    if result is None:
        groups = [[p] for p in parts]
    for group in groups:
        text = "\n".join(t for _, t in group)
        result = convert_snippet(path, text, rules) if len(groups) > 1 else result
        if result is None:
            continue
        starts, cells, pos = [], [], 0
        for cell, cell_text in group:
            starts.append(pos)
            cells.append(cell)
            pos += len(cell_text) + 1

        def locate(offset: int) -> tuple[int, int]:
            # The cell holding the offset of the joined text (its end, the "\n" after it,
            # included): a search, as a notebook has thousands of cells and edits.
            k = bisect_right(starts, offset) - 1
            return cells[k], offset - starts[k]

        for applied in result.edits:
            edit = applied.edit
            cell, at = locate(edit.start)
            edits.append(CellEdit(cell, at, at + edit.end - edit.start, edit.rule, edit.replacement, applied))
        for offset, finding in result.findings:
            cell, at = locate(offset)
            found.append(CellFinding(cell, at, finding))
