"""Ported code must run, not only read well: every rule fixture of an emulated target (mlu,
npu), ported with porter's default rules, is run under that emulated device (its top-level
code: imports, setup, the calls a script makes), and must not fail.

Every case runs, as far as this environment lets it: one that reaches an import of a
library not installed here (triton, flash_attn, deepspeed, ray...) or of its own imagined
project (`from nets import Net`) is skipped when it gets there, so a guarded or unreached
import stops nothing. A fixture that cannot run anywhere says why on its `fixture: run=no
(...)` line (a module of a package, a model from the Hub, names the op scan reads but never
defines); it runs all the same, and only its failure is excused. Other fixtures (shell
launchers, configs, requirements, Dockerfiles) are not Python a device runs, and HIP's
outputs target ROCm, which is not emulated. All of a target's run in one emulated process
(tests/data/run_ported_fixtures.py). A target runs here once porter's rules take it
(porter.rules.TARGETS) and its fixtures exist.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

pytest.importorskip("torch")

from fixture_cases import discover  # noqa: E402
from porter.emulator import apis, environment  # noqa: E402
from porter.emulator.launch import prepare  # noqa: E402
from porter.emulator.targets import DEVICES  # noqa: E402
from porter.engine.pipeline import convert_file  # noqa: E402
from porter.rules import TARGETS, ActiveRules, load_rules  # noqa: E402

RUNNER = Path(__file__).resolve().parent / "data" / "run_ported_fixtures.py"
ALL_CASES = [c for c in discover() if c.path.suffix == ".py" and not c.path.name.endswith(".setup.py")]
EMULATED = [t for t in DEVICES if t in TARGETS and any(c.target == t for c in ALL_CASES)]
# The line each target's fixtures run against: mlu's 2.4 (the fixtures' own), npu's newest.
LINES = {"mlu": "2.4", "npu": apis.default_version("npu")}


@pytest.mark.slow
@pytest.mark.parametrize("target", EMULATED)
def test_ported_fixtures_run_on_the_emulated_device(tmp_path, target):
    prepare(quiet=True)
    rules = ActiveRules(load_rules(target))
    cases = [c for c in ALL_CASES if c.target == target]
    ported: dict[str, str] = {}
    for case in cases:
        data = case.path.read_bytes()
        result = convert_file(case.path.name, data, "python", rules)
        assert result.status in ("changed", "unchanged"), (case.id, result.reason)
        dest = tmp_path / case.code / case.path.name
        dest.parent.mkdir(exist_ok=True)
        dest.write_bytes(result.new_bytes if result.new_bytes is not None else data)
        ported[str(dest)] = case.id
    env = environment(2, LINES[target], target=target)
    env.update(OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    proc = subprocess.run(
        [sys.executable, str(RUNNER), *ported], env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    excused = {str(tmp_path / c.code / c.path.name) for c in cases if not c.runs}
    failed = {ported[p]: r["why"] for p, r in results.items() if r["status"] == "failed" and p not in excused}
    assert not failed, json.dumps(failed, indent=1)
    ran = [p for p, r in results.items() if r["status"] == "ok"]
    # Most cases need nothing but torch and transformers: a run that skips them all proves nothing.
    assert len(ran) > (len(ported) - len(excused)) * 3 // 4, {
        ported[p]: r["why"] for p, r in results.items() if r["status"] == "skipped"
    }
    stale = sorted(ported[p] for p in excused if results[p]["status"] == "ok")
    if stale:
        warnings.warn(
            f"{len(stale)} fixture(s) say run=no but run on the emulated {target}: {', '.join(stale)}",
            stacklevel=1,
        )
