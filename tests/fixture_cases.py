"""Discovery of rule fixtures: fixtures/rules/<target>/<CODE>/<case>.<ext>.

A case whose name starts with `change` must make the rule fire (an edit or a finding);
one that starts with `keep` must not (no edit and no finding of that rule). When
`<case>.out.<ext>` exists the converted file must equal it byte for byte; otherwise the
file must come out byte-identical. A line may carry `expect: CODE[,CODE]` in a comment:
those rules must report (edit or find) on that line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "rules"
_EXPECT = re.compile(r"expect:\s*(PRT\d{3}(?:\s*,\s*PRT\d{3})*)")


@dataclass(frozen=True)
class Case:
    target: str
    code: str
    path: Path
    expected: Path | None

    @property
    def id(self) -> str:
        return f"{self.code}/{self.path.name}[{self.target}]"

    @property
    def must_fire(self) -> bool:
        return self.path.name.startswith("change")

    def expectations(self) -> dict[int, set[str]]:
        out: dict[int, set[str]] = {}
        text = self.path.read_bytes().decode("utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), 1):
            m = _EXPECT.search(line)
            if m:
                out[lineno] = {c.strip() for c in m.group(1).split(",")}
        return out


def discover() -> list[Case]:
    cases = []
    for path in sorted(FIXTURES.glob("*/PRT*/*")):
        if ".out." in path.name or path.is_dir():
            continue
        stem, dot, ext = path.name.partition(".")
        expected = path.with_name(f"{stem}.out.{ext}") if dot else None
        cases.append(Case(path.parent.parent.name, path.parent.name, path, expected if expected and expected.exists() else None))
    return cases
