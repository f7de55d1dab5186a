"""Audit a conversion: every torch.cuda use in SRC is either edited or has a finding.

Usage: python -m porter.python.audit SRC OUT   (OUT holds porter_report/report.json)
Report lines are SRC lines, so the audit reads SRC: a torch.cuda reference on a line with
no edit and no finding is one porter left behind silently. Exits 1 when there is one. Used by the tests on the golden repository and by hand on real
repositories (the "done when" of the convert issue).
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

from porter.python.resolve import ImportMap


def cuda_references(source: bytes) -> list[tuple[int, str]]:
    """(line, qualified name) of every reference to torch.cuda.* in code."""
    tree = ast.parse(source)
    imports = ImportMap.from_module(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)):
            qual = imports.resolve(node)
            if qual and (qual == "torch.cuda" or qual.startswith("torch.cuda.")):
                found.append((node.lineno, qual))
    return found


def uncovered(src: Path, out: Path) -> list[str]:
    report = json.loads((out / "porter_report" / "report.json").read_text(encoding="utf-8"))
    covered = {
        (f["path"], line) for f in report["findings"] for line in range(f["line"], (f.get("end_line") or f["line"]) + 1)
    }
    covered |= {(entry["path"], e["line"]) for entry in report["files"] for e in entry.get("edits", [])}
    kept_modules = {f["path"] for f in report["findings"] if f["line"] and "module kept" in f["message"]}
    problems = []
    for entry in report["files"]:
        path = entry["path"]
        if not path.endswith(".py") or entry["status"] in ("skipped", "failed") or path in kept_modules:
            continue
        try:
            refs = cuda_references((src / path).read_bytes())
            still_there = {qual for _, qual in cuda_references((out / path).read_bytes())}
        except SyntaxError:
            continue
        for line, qual in refs:
            # Converted through its import (`from torch.cuda.amp import autocast`) if OUT no longer has it.
            if (path, line) not in covered and qual in still_there:
                problems.append(f"{path}:{line}: {qual} left without a finding")
    return problems


if __name__ == "__main__":
    problems = uncovered(Path(sys.argv[1]), Path(sys.argv[2]))
    print("\n".join(problems) or "every torch.cuda use left has a finding")
    sys.exit(1 if problems else 0)
