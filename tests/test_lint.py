"""The code is linted and formatted as pyproject.toml's [tool.ruff] says: CI runs both through
this test (the README's test command), so a change that breaks either does not land."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    return subprocess.run([ruff, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_check_passes():
    proc = _ruff("check", ".")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_ruff_format_leaves_every_file_as_it_is():
    proc = _ruff("format", "--check", ".")
    assert proc.returncode == 0, "run `ruff format .`:\n" + proc.stdout[-4000:] + proc.stderr[-2000:]
