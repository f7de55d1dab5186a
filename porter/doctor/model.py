"""One check's outcome, and the exit code of a run."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"
STATUSES = (OK, WARN, FAIL, SKIP)


@dataclass(frozen=True)
class Result:
    """What one check found: `fix` is one command or action ("" when nothing is to be done)."""

    name: str
    status: str
    detail: str
    fix: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r} is not one of {', '.join(STATUSES)}")

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def exit_code(results: Iterable[Result]) -> int:
    """0: every check passed (warnings and skips allowed); 1: a check failed."""
    return 1 if any(r.status == FAIL for r in results) else 0
