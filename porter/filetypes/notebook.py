"""Jupyter notebooks (`.ipynb`): code cells converted, everything else kept byte for byte.

Cell code goes through `_notebook_cells`; the changes are written back as span edits of the
JSON text that replace only the source strings that changed, encoded as the file encodes
strings (raw UTF-8 or `\\uXXXX` escapes) and laid out with the file's own separators, so
outputs, metadata, key order and indentation are untouched.
"""

from __future__ import annotations

import json
import re

from dataclasses import replace

from porter.core.edits import Found, apply_edits, select_edits
from porter.core.textio import line_ending
from porter.core.model import Edit, Finding, Skipped
from porter.filetypes._common import TextFile, open_text
from porter.filetypes._configtree import Mapping, Scalar, Sequence, top_keys
from porter.filetypes._jsontree import JsonError, json_problem, parse_json
from porter.filetypes._notebook_cells import CellEdit, convert_cells
from porter.python.snippet import moved
from porter.rules import ActiveRules

KIND = "notebook"
_ESCAPED = re.compile(r"\\u(?:00[89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]{2}|[1-9a-fA-F][0-9a-fA-F]{3})")


def _code_sources(root: Mapping) -> list[tuple[list[Scalar], bool]]:
    """The source strings of each code cell, and whether they stand in a JSON list (nbformat
    also allows one plain string, which must stay one string)."""
    out = []
    cells = top_keys(root).get("cells")
    for cell in cells.items if isinstance(cells, Sequence) else ():
        keys = top_keys(cell)
        kind, source = keys.get("cell_type"), keys.get("source")
        if not (isinstance(kind, Scalar) and kind.value == "code"):
            continue
        parts = source.items if isinstance(source, Sequence) else (source,)
        if parts and all(isinstance(p, Scalar) and isinstance(p.value, str) for p in parts):
            out.append((list(parts), isinstance(source, Sequence)))
    return out


def _is_python(nb: dict) -> bool:
    meta = nb.get("metadata") if isinstance(nb.get("metadata"), dict) else {}
    lang = (meta.get("language_info") or {}).get("name") or (meta.get("kernelspec") or {}).get("language")
    return not isinstance(lang, str) or lang.lower() == "python"


def _separator(text: str, parts: list[Scalar]) -> str:
    """What stands between two source strings in this file (`,\\n   ` as nbformat writes it)."""
    if len(parts) > 1:
        return text[parts[0].end : parts[1].start]
    line_start = text.rfind("\n", 0, parts[0].start) + 1
    indent = text[line_start : parts[0].start]
    newline = line_ending(text, line_start - 1) if line_start else "\n"
    return "," + newline + indent if not indent.strip() else ", "


def _rewrite(
    text: str, parts: list[Scalar], in_list: bool, edits: list[CellEdit], ascii_only: bool
) -> list[tuple[Edit, list[CellEdit]]]:
    """JSON edits for one cell: each group of touched source strings re-rendered, with the
    cell edits it applies."""
    bounds, pos = [], 0
    for part in parts:
        bounds.append((pos, pos + len(part.value)))
        pos += len(part.value)

    def element(offset: int) -> int:
        return next((k for k, (a, b) in enumerate(bounds) if a <= offset < b), len(parts) - 1)

    groups: list[list] = []  # [first, last, edits]
    for e in sorted(edits, key=lambda e: e.start):
        first, last = element(e.start), element(max(e.start, e.end - 1))
        if groups and first <= groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], last)
            groups[-1][2].append(e)
        else:
            groups.append([first, last, [e]])
    out = []
    sep = _separator(text, parts)
    for first, last, group in groups:
        base = bounds[first][0]
        old = "".join(p.value for p in parts[first : last + 1])
        pairs = [(Edit(e.rule, e.start - base, e.end - base, e.replacement), e) for e in group]
        chosen, _ = select_edits([edit for edit, _ in pairs])
        taken = {id(edit) for edit in chosen}
        applied = [cell_edit for edit, cell_edit in pairs if id(edit) in taken]
        new = apply_edits(old, chosen)
        line_shaped = in_list and all(
            p.value.count("\n") <= 1 and p.value.rstrip("\n").count("\n") == 0 for p in parts[first : last + 1]
        )
        pieces = new.splitlines(keepends=True) if line_shaped else [new]
        rendered = sep.join(json.dumps(p, ensure_ascii=ascii_only) for p in pieces or [""])
        out.append((Edit(chosen[0].rule, parts[first].start, parts[last].end, rendered), applied))
    return out


def find_notebook(path: str, data: bytes, rules: ActiveRules) -> Found | Skipped | None:
    """Findings and edits for the code cells of one notebook. Never raises for bad input.

    A cell's edit becomes an edit of the JSON string(s) that hold the cell's code; every cell
    finding that went into it carries that same JSON edit (the engine applies it once and
    records each rule), at the finding's own place in the notebook.
    """
    file = open_text(path, data, "a notebook")
    if not isinstance(file, TextFile):
        return file
    try:
        nb = json.loads(file.text)
        root = parse_json(file.text)
    except (json.JSONDecodeError, JsonError, RecursionError) as exc:
        return Skipped(f"invalid JSON: {getattr(exc, 'msg', exc)}; copied unchanged")
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return Skipped("not a Jupyter notebook in nbformat 4 (no 'cells' list); copied unchanged")
    if not _is_python(nb):
        return None
    code = _code_sources(root)
    sources = [parts for parts, _ in code]
    in_lists = [in_list for _, in_list in code]
    cell_edits, cell_findings = convert_cells(path, ["".join(p.value for p in parts) for parts in sources], rules)

    def place(cell: int, offset: int, finding: Finding) -> Finding:
        """A cell's finding at its line and column in the notebook file."""
        parts, k = sources[cell], 0
        while k < len(parts) - 1 and offset >= len(parts[k].value):
            offset -= len(parts[k].value)
            k += 1
        return moved(finding, path, *file.index.line_col(parts[k].start + 1 + offset))

    findings = [place(cf.cell, cf.offset, cf.finding) for cf in cell_findings]
    # nbformat writes raw UTF-8; keep `\uXXXX` escapes only in files that already use them.
    ascii_only = file.text.isascii() and bool(_ESCAPED.search(file.text))
    by_cell: dict[int, list[CellEdit]] = {}  # (grouped once: a scan per cell was quadratic)
    for e in cell_edits:
        by_cell.setdefault(e.cell, []).append(e)
    for cell, mine in sorted(by_cell.items()):
        parts = sources[cell]
        for json_edit, applied in _rewrite(file.text, parts, in_lists[cell], mine, ascii_only):
            for e in applied:
                findings.append(
                    replace(
                        place(cell, e.start, e.finding),
                        edit=Edit(e.rule, json_edit.start, json_edit.end, json_edit.replacement),
                    )
                )
    # A `# porter: ignore[...]` in a cell's code stands on that cell's line of the JSON text.
    return file.found(findings, json_problem)
