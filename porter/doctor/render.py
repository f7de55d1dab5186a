"""`porter doctor`'s output: one line per check with its fix, or a JSON list of the same."""

from __future__ import annotations

import json
from collections import Counter

from porter.doctor.model import Result, STATUSES


def render_text(results: list[Result], target: str, line: str) -> str:
    width = max((len(r.name) for r in results), default=0)
    lines = [f"{r.status:<4}  {r.name:<{width}}  {r.detail}" + (f"  -> fix: {r.fix}" if r.fix else "") for r in results]
    counts = Counter(r.status for r in results)
    where = f"{target} {line}" if line != "any" else target
    lines.append(f"porter doctor ({where}): " + ", ".join(f"{counts[s]} {s}" for s in STATUSES))
    return "\n".join(lines) + "\n"


def render_json(results: list[Result]) -> str:
    return json.dumps([r.as_dict() for r in results], indent=1, ensure_ascii=False) + "\n"
