"""How `porter verify` imports a tree: warm and cold parents, time limits of a module's own
time, failures confirmed alone, optional-package guards, and the progress line."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from porter.verify import harness
from porter.verify.guards import needed_package
from porter.verify.owntime import own_seconds, waited_for_cpu
from porter.verify.preload import preload_names, starts_cold
from porter.verify.progress import Progress

ROOT = Path(__file__).resolve().parents[1]
runs = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch: pip install '.[emulate]'")


def test_preload_names_are_the_third_party_modules_imported_at_module_level():
    sources = {
        "pkg/a.py": "import os, transformers.trainer\nfrom peft import LoraConfig\nfrom . import b\nimport pkg.c\n"
        "try:\n    import vllm\nexcept ImportError:\n    vllm = None\n"
        "def f():\n    import deepspeed\n",
        "pkg/b.py": "from __future__ import annotations\nimport torch, torch_mlu\nimport peft\nif True:\n    import trl\n",
        "broken.py": "def (:\n",
    }
    assert preload_names(sources, {"pkg", "broken"}) == ["os", "transformers.trainer", "peft", "vllm", "torch", "trl"]
    # Under the npu emulator torch_npu is the harness's own import; torch_mlu would be the tree's.
    npu = {rel: text.replace("torch_mlu", "torch_npu") for rel, text in sources.items()}
    assert "torch_npu" not in preload_names(npu, {"pkg", "broken"}, "torch_npu")
    assert "torch_mlu" in preload_names(sources, {"pkg", "broken"}, "torch_npu")


@pytest.mark.parametrize(
    ("source", "cold"),
    [
        ("import torch\nimport torch_mlu\nx = torch.zeros(1, device='mlu')\n", False),
        ("import torch\nfrom transformers import Trainer\n", False),  # never names the device
        ("import torch\nx = torch.zeros(1, device='mlu')\nimport torch_mlu\n", True),  # PRT704's case
        ("import torch\ntorch.mlu.synchronize()\n", True),
        ("import torch  # runs on mlu\nimport torch_mlu\n", False),  # a comment is not a use
        ("def (:\n  'mlu'", True),
    ],
)
def test_modules_naming_the_device_before_importing_its_package_start_cold(source, cold):
    assert starts_cold(source) is cold
    assert starts_cold(source.replace("mlu", "npu"), "npu") is cold
    # "mlu" is no device on the npu emulator: only the source's own device words count.
    assert starts_cold(source, "npu") is (source.startswith("def (:"))


@pytest.mark.parametrize(
    ("error", "package"),
    [
        ("ImportError: vllm is not installed.", "vllm"),
        ("ImportError: `liger-kernel` is not installed, please install it.", "liger-kernel"),
        (
            "ImportError: The 'trl>=0.18.0' distribution was not found and is required by this application. \n"
            "To fix: run `pip install trl>=0.18.0`.",
            "trl",
        ),
        (
            "ImportError: trl>=0.18,<=0.24 is required for a normal functioning of this module, but found trl==0.9.",
            "trl",
        ),
        (
            "ImportError: LlamaTokenizer requires the SentencePiece library but it was not found in your environment.",
            "sentencepiece",
        ),
        ("ImportError: Please install galore_torch: pip install galore-torch", "galore_torch"),
        ("ImportError: cannot import name 'flash_attn_func' from 'transformers.utils'", None),
    ],
)
def test_optional_package_guards_name_the_package(error, package):
    assert needed_package({"status": "error", "import_error": True, "error": error}) == package


def test_only_import_errors_are_guards():
    said = {"status": "error", "import_error": False, "error": "RuntimeError: vllm is not installed"}
    assert needed_package(said) is None


def test_own_time_leaves_out_the_wait_for_a_cpu():
    assert waited_for_cpu(-1) == 0.0  # no such process: nothing known, nothing subtracted
    assert own_seconds(-1, 3.0) == 3.0
    if os.path.exists(f"/proc/{os.getpid()}/schedstat"):
        assert 0.0 <= waited_for_cpu(os.getpid()) and own_seconds(os.getpid(), 10**6) <= 10**6


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return tmp_path


def test_a_module_is_timed_on_its_own_time_from_when_it_starts(tmp_path, monkeypatch):
    """Two 0.6 s sleepers with a limit of 1 s, one at a time: the second waits 0.6 s in the
    queue and is not charged for it; a module that only waited for a CPU is never timed out."""
    root = _tree(
        tmp_path,
        {
            "a.py": "import time\ntime.sleep(0.6)\n",
            "b.py": "import time\ntime.sleep(0.6)\n",
            "slow.py": "import time\ntime.sleep(30)\n",
        },
    )
    todo = [["a", str(root), "a.py"], ["b", str(root), "b.py"], ["slow", str(root), "slow.py"]]
    got = {r["path"]: r for r in harness.run_all(todo, str(root), [], 1.0, 1)}
    assert got["a.py"]["status"] == got["b.py"]["status"] == "ok"
    assert got["slow.py"]["status"] == "timeout" and "of its own time" in got["slow.py"]["error"]
    # The same sleeper on a machine where it waited for a CPU all along: not a timeout of its own.
    monkeypatch.setattr(harness, "own_seconds", lambda pid, wall: 0.0)
    root2 = _tree(tmp_path / "waits", {"waits.py": "import time\ntime.sleep(1.5)\n"})
    (result,) = harness.run_all([["waits", str(root2), "waits.py"]], str(root2), [], 0.5, 1)
    assert result["status"] == "ok"


def test_modules_of_a_package_share_its_import_but_not_each_others(tmp_path):
    """Siblings start from their package imported once (as each would import it first
    alone), each in its own child: one's side effects never reach another, and a package
    that fails fails each of its modules."""
    root = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "SEEN = []\n",
            "pkg/a.py": "from pkg import SEEN\nSEEN.append('a')\n",
            "pkg/b.py": "from pkg import SEEN\nif SEEN:\n    raise RuntimeError(f'b saw {SEEN}')\n",
            "broken/__init__.py": "raise ValueError('the package is broken')\n",
            "broken/x.py": "",
            "broken/y.py": "",
        },
    )
    todo = [
        [name, str(root), rel]
        for name, rel in [
            ("pkg", "pkg/__init__.py"),
            ("pkg.a", "pkg/a.py"),
            ("pkg.b", "pkg/b.py"),
            ("broken", "broken/__init__.py"),
            ("broken.x", "broken/x.py"),
            ("broken.y", "broken/y.py"),
        ]
    ]
    got = {r["path"]: r for r in harness.run_all(todo, str(root), [str(root)], 30.0, 2)}
    assert [got[f"pkg/{m}.py"]["status"] for m in "ab"] == ["ok", "ok"]
    assert {got[f"broken/{m}.py"]["error"] for m in "xy"} == {"ValueError: the package is broken"}


def test_progress_shows_on_a_terminal_only():
    quiet = io.StringIO()
    Progress(quiet).count("modules", 3, 307)
    assert quiet.getvalue() == ""  # not a terminal
    shown = io.StringIO()
    progress = Progress(shown, enabled=True)
    progress.count("modules", 3, 307)
    progress.show("LoRA on 1 emulated device(s)", part="lora")
    progress.count("modules", 4, 307)
    progress.drop("modules")
    progress.close()
    assert [line.rstrip() for line in shown.getvalue().split("\r")[1:5]] == [
        "porter verify: modules 3/307",
        "porter verify: modules 3/307 | LoRA on 1 emulated device(s)",
        "porter verify: modules 4/307 | LoRA on 1 emulated device(s)",
        "porter verify: LoRA on 1 emulated device(s)",
    ]
    assert shown.getvalue().endswith("\r")


def _verify(tree: Path, *args: str) -> dict:
    (tree / "porter_report").mkdir(exist_ok=True)
    (tree / "porter_report" / "report.json").write_text('{"target": "mlu", "target_version": "2.4"}', encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, "-m", "porter", "verify", str(tree), "--format", "json", "--no-lora", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    assert "porter verify:" not in proc.stderr  # no progress line without a terminal
    return {"exit": proc.returncode, **json.loads(proc.stdout)}


@pytest.mark.slow
@runs
def test_failures_are_confirmed_alone(tmp_path):
    tree = _tree(
        tmp_path / "t",
        {
            "pkg/__init__.py": "",
            # Fails only where a preloaded module is already imported: the warm parent's doing.
            "pkg/touchy.py": "import sys\nif 'xml.dom.minidom' in sys.modules:\n    raise RuntimeError('polluted')\n",
            "pkg/uses_minidom.py": "import xml.dom.minidom\n",
            "pkg/broken.py": "import torch\nimport torch_mlu\nraise KeyError('hidden_size')\n",
        },
    )
    data = _verify(tree)
    by = {m["path"]: m for m in data["modules"]}
    assert by["pkg/touchy.py"]["status"] == "ok" and by["pkg/touchy.py"]["first"]["status"] == "error"
    assert by["pkg/broken.py"]["status"] == "error" and by["pkg/broken.py"]["first"]["status"] == "error"
    assert "first" not in by["pkg/uses_minidom.py"]
    assert [(f["path"], f["rule"]) for f in data["findings"]] == [("pkg/broken.py", "PRT701")]
    assert data["exit"] == 1 and set(data["phases"]) == {"imports"}


@pytest.mark.slow
@runs
def test_optional_package_guards_need_a_package_and_are_not_confirmed(tmp_path):
    tree = _tree(
        tmp_path / "t",
        {
            "pkg/__init__.py": "",
            "pkg/guarded.py": "import torch\nimport torch_mlu\nraise ImportError('fancy_kernels is not installed')\n",
            "pkg/versioned.py": "from transformers.utils.versions import require_version\nrequire_version('notapkg>=1.0')\n",
        },
    )
    data = _verify(tree)
    by = {m["path"]: m for m in data["modules"]}
    assert by["pkg/guarded.py"]["status"] == "missing-dependency" and "first" not in by["pkg/guarded.py"]
    assert by["pkg/versioned.py"]["status"] == "missing-dependency"
    assert data["summary"]["missing_dependencies"] == ["fancy_kernels", "notapkg"]
    assert data["findings"] == [] and data["exit"] == 0
