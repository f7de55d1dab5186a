"""mypy over porter/ against the checked-in baseline of the errors the code had when the check
came in (tools/mypy-baseline.txt). The baseline only shrinks:

    python tools/mypy_baseline.py           # exit 1 on an error not in the baseline, or a
                                            # baseline entry that is gone (take it off)
    python tools/mypy_baseline.py --write   # rewrite the baseline (only ever to shrink it)

An error is keyed by its file, message and code, not its line, so that an edit above it does
not make it new; the same error twice in a file is two entries.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "tools" / "mypy-baseline.txt"
_ERROR = re.compile(r"^(?P<path>[^:]+):\d+(?::\d+)?: error: (?P<message>.*)$")


def current_errors() -> Counter[str]:
    """mypy's errors now, as baseline entries (the configuration is pyproject.toml's)."""
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--no-pretty", "--show-error-codes"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if proc.returncode not in (0, 1):  # 2: mypy itself failed (configuration, a crash)
        sys.exit(f"mypy did not run: {(proc.stderr or proc.stdout).strip()[-2000:]}")
    entries: Counter[str] = Counter()
    for line in proc.stdout.splitlines():
        m = _ERROR.match(line)
        if m:
            entries[f"{m['path']}: {m['message']}"] += 1
    return entries


def read_baseline() -> Counter[str]:
    if not BASELINE.exists():
        return Counter()
    return Counter(line for line in BASELINE.read_text(encoding="utf-8").splitlines() if line.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite the baseline with today's errors")
    args = parser.parse_args()
    now = current_errors()
    if args.write:
        BASELINE.write_text("".join(f"{entry}\n" for entry in sorted(now.elements())), encoding="utf-8")
        print(f"{BASELINE.relative_to(ROOT)}: {sum(now.values())} errors")
        return 0
    baseline = read_baseline()
    new, gone = now - baseline, baseline - now
    for entry in sorted(new.elements()):
        print(f"new: {entry}")
    for entry in sorted(gone.elements()):
        print(f"gone (take it off {BASELINE.name}: python tools/mypy_baseline.py --write): {entry}")
    print(
        f"mypy: {sum(now.values())} errors, baseline {sum(baseline.values())}; "
        f"{sum(new.values())} new, {sum(gone.values())} gone"
    )
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main())
