"""Discovery of rule fixtures: fixtures/rules/<target>/<CODE>/<case>.<ext>.

A case whose name starts with `change` must make the rule fire (an edit or a finding);
one that starts with `keep` must not (no edit and no finding of that rule). When
`<case>.out.<ext>` exists the converted file must equal it byte for byte; otherwise the
file must come out byte-identical. A line may carry `expect: CODE[,CODE]` in a comment:
those rules must report (edit or find) on that line. `expect-note: CODE[,CODE]` says those
rules report there only as an `info` note, outside the default set (nothing to act on).

A case may say how it runs in a comment line `fixture: select=CODE[,CODE] version=V run=no (why)`:
`select` isolates the rules it names (a case about one rule, unmoved by others), `version`
pins the target's torch line (a newer op table does not move the case), and `run=no` says
why the ported case cannot be run (tests/test_fixtures_run_emulated.py runs the others).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "rules"
_EXPECT = re.compile(r"expect:\s*(PRT\d{3}(?:\s*,\s*PRT\d{3})*)")
_EXPECT_NOTE = re.compile(r"expect-note:\s*(PRT\d{3}(?:\s*,\s*PRT\d{3})*)")
_SETTINGS = re.compile(r"fixture:((?:\s+(?:select|version|run)=\S+)+)\s*(?:\(.*\))?\s*$")


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

    def settings(self) -> tuple[str | None, tuple[str, ...]]:
        """(version, select) from the case's `fixture:` line; (None, ()) without one."""
        pairs = self._fixture_line()
        return pairs.get("version"), tuple(filter(None, pairs.get("select", "").split(",")))

    @property
    def runs(self) -> bool:
        """Whether the ported case can run (its `fixture:` line says `run=no` when not)."""
        return self._fixture_line().get("run") != "no"

    def _fixture_line(self) -> dict[str, str]:
        text = self.path.read_bytes().decode("utf-8", errors="replace")
        for line in text.splitlines():
            m = _SETTINGS.search(line)
            if m:
                return dict(item.split("=", 1) for item in m.group(1).split())
        return {}

    def expectations(self, pattern: re.Pattern[str] = _EXPECT) -> dict[int, set[str]]:
        out: dict[int, set[str]] = {}
        text = self.path.read_bytes().decode("utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), 1):
            m = pattern.search(line)
            if m:
                out[lineno] = {c.strip() for c in m.group(1).split(",")}
        return out

    def expected_notes(self) -> dict[int, set[str]]:
        return self.expectations(_EXPECT_NOTE)


def discover() -> list[Case]:
    cases = []
    for path in sorted(FIXTURES.glob("*/PRT*/*")):
        if ".out." in path.name or path.is_dir():
            continue
        stem, dot, ext = path.name.partition(".")
        expected = path.with_name(f"{stem}.out.{ext}") if dot else None
        cases.append(
            Case(path.parent.parent.name, path.parent.name, path, expected if expected and expected.exists() else None)
        )
    return cases


def table_can_report(target: str, rule, version: str | None = None) -> bool:
    """Whether an op-table rule can fire at all: the target's API table holds an entry of a
    status it reports (as a Tensor method when it reports method uses only). HIP's table marks
    nothing unsupported, so its PRT901/PRT904 wait for an entry before they get a change case."""
    from porter.tables.optables import load_api_table

    if "unknown" in rule.params.statuses:
        return True  # every API the table does not list
    table = load_api_table(target, version)
    methods_only = not set(rule.params.uses) - {"method", "likely-method"}
    entries = [*table.entries.values(), *table.prefixes.values()]
    return any(
        e.status in rule.params.statuses and (not methods_only or e.api.startswith("torch.Tensor.")) for e in entries
    )
