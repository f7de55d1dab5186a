"""A repository's own Python rules: libcst codemods named by `codemods` in [tool.porter], run
after porter's rules on the files their NAMES screen in, their edits in the same patch,
report, check findings, suppressions, selection and cache as porter's own."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import porter
from porter.cli import main
from porter.rules import load_rules

pytest.importorskip("libcst")

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "codemod_project"

# Renames the in-house helper; logs every file libcst parses for it, and the process that did.
RENAME = """
import os
import libcst as cst
import libcst.matchers as m
from libcst.codemod import VisitorBasedCodemodCommand

LOG = {log!r}


class DeviceSync(VisitorBasedCodemodCommand):
    CODE = "PRT811"
    DESCRIPTION = "mycorp.cuda_sync() is mycorp.device_sync()"
    NAMES = ["cuda_sync"]

    def transform_module_impl(self, tree):
        with open(LOG, "a") as fh:
            fh.write(f"{{self.context.filename}} {{os.getpid()}}\\n")
        return super().transform_module_impl(tree)

    def leave_Attribute(self, original_node, updated_node):
        if m.matches(updated_node, m.Attribute(value=m.Name("mycorp"), attr=m.Name("cuda_sync"))):
            return updated_node.with_changes(attr=cst.Name({new!r}))
        return updated_node
"""

TRAIN = """import torch
import mycorp

x = torch.zeros(2).cuda()
mycorp.cuda_sync()
mycorp.cuda_sync()  # porter: ignore[PRT811]
"""
OTHER = "import torch\n\ny = torch.ones(1).cuda()\n"


def project(
    tmp_path: Path,
    codemod: str | None = None,
    files: dict[str, str] | None = None,
    config: str = 'target = "mlu"\ncodemods = ["porter_rules/*.py"]\n',
) -> Path:
    root = tmp_path / "proj"
    (root / "porter_rules").mkdir(parents=True, exist_ok=True)
    (root / "porter_rules" / "house.py").write_text(
        codemod if codemod is not None else RENAME.format(log=str(tmp_path / "parsed.log"), new="device_sync")
    )
    (root / "porter.toml").write_text(config)
    for rel, text in (files or {"src/train.py": TRAIN, "src/other.py": OTHER}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    load_rules.cache_clear()  # a codemod file of the same path may have changed since the last test
    return root


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def check_json(root: Path, *args):
    result = invoke("check", root / "src", "--no-cache", "--format", "json", *args)
    return result, json.loads(result.stdout) if result.stdout.strip() else None


def parsed(tmp_path: Path) -> list[tuple[str, int]]:
    log = tmp_path / "parsed.log"
    lines = log.read_text().split("\n") if log.exists() else []
    return [(name, int(pid)) for name, pid in (line.rsplit(" ", 1) for line in lines if line)]


def test_codemod_edits_go_into_patch_report_and_check_and_a_second_convert_changes_nothing(tmp_path):
    root = project(tmp_path)
    out = tmp_path / "out"
    result = invoke("convert", root / "src", "-o", out, "--no-cache", "-j", "1")
    assert result.exit_code == 0, result.output
    assert (out / "train.py").read_text().splitlines()[5:7] == [
        "mycorp.device_sync()",
        "mycorp.cuda_sync()  # porter: ignore[PRT811]",
    ]  # the suppressed line is kept
    patch = (out / "porter_report" / "changes.patch").read_text()
    assert "+mycorp.device_sync()" in patch and "+x = torch.zeros(2).mlu()" in patch  # porter's own edits too
    report = json.loads((out / "porter_report" / "report.json").read_text())
    assert report["summary"]["edits_by_rule"]["PRT811"] == 1
    assert report["rules"]["PRT811"]["name"] == "device-sync"
    assert "PRT811" in (out / "porter_report" / "report.md").read_text()
    # check reports the edit it would make, under the codemod's code, at the call.
    checked, data = check_json(root)
    assert checked.exit_code == 0, checked.output
    assert [(f["path"], f["line"], f["col"]) for f in data["findings"] if f["rule"] == "PRT811"] == [("train.py", 5, 8)]
    # The output converted again: no edit (the codemod and porter's rules are idempotent).
    (root / "ported").mkdir()
    shutil.copytree(out, root / "ported" / "src", ignore=shutil.ignore_patterns("porter_report", "porter_lora"))
    again = porter.convert(root / "ported" / "src", diff=True, cache_dir=None)
    assert again.edits == 0 and again.patch == b""


def test_codemod_honours_ignore_select_and_per_file_ignores(tmp_path):
    root = project(tmp_path)
    assert "PRT811" not in {f["rule"] for f in check_json(root, "--ignore", "PRT811")[1]["findings"]}
    assert {f["rule"] for f in check_json(root, "--select", "PRT811")[1]["findings"]} == {"PRT811"}
    (root / "porter.toml").write_text(
        'target = "mlu"\ncodemods = ["porter_rules/*.py"]\nper-file-ignores = { "src/train.py" = ["PRT811"] }\n'
    )
    done = porter.convert(root / "src", diff=True)
    assert b"device_sync" not in done.patch and b".mlu()" in done.patch


def test_codemod_runs_only_on_files_its_names_screen_in(tmp_path):
    root = project(tmp_path, files={"src/train.py": TRAIN, "src/other.py": OTHER, "src/notes.py": "cuda_syncer = 1\n"})
    porter.check(root / "src", jobs=1)
    # not other.py, nor notes.py's cuda_syncer (whole words); train.py once, then its output once
    # more (the idempotence check).
    assert [name for name, _ in parsed(tmp_path)] == ["train.py", "train.py"]


def test_codemod_runs_in_worker_processes_with_jobs(tmp_path, monkeypatch):
    files = {f"src/m{i}.py": TRAIN for i in range(8)}
    root = project(tmp_path, files=files)
    monkeypatch.setattr("porter.engine.parallel.POOL_THRESHOLD", 0)  # workers even for a small tree
    done = porter.convert(root / "src", diff=True, jobs=3)
    assert done.patch.count(b"+mycorp.device_sync()") == 8
    pids = {pid for _, pid in parsed(tmp_path)}
    assert len(pids) > 1  # the parent and forked workers each ran it


def test_result_cache_keys_on_the_codemod_files_content(tmp_path):
    root = project(tmp_path)
    cache = tmp_path / "cache"
    assert b"+mycorp.device_sync()" in porter.convert(root / "src", diff=True, cache_dir=cache).patch
    (root / "porter_rules" / "house.py").write_text(RENAME.format(log=str(tmp_path / "parsed.log"), new="gpu_sync"))
    load_rules.cache_clear()
    assert b"+mycorp.gpu_sync()" in porter.convert(root / "src", diff=True, cache_dir=cache).patch


NOT_IDEMPOTENT = """
import libcst as cst
from libcst.codemod import ContextAwareTransformer


class Bump(ContextAwareTransformer):
    CODE = "PRT812"
    DESCRIPTION = "counts up"
    NAMES = ["counter"]

    def leave_Integer(self, original_node, updated_node):
        return updated_node.with_changes(value=str(int(updated_node.value) + 1))
"""


def test_a_codemod_that_is_not_idempotent_is_an_error_naming_it_and_edits_nothing(tmp_path):
    root = project(tmp_path, NOT_IDEMPOTENT, {"src/train.py": "import torch\ncounter = 1\nx = torch.zeros(2).cuda()\n"})
    result, data = check_json(root)
    assert result.exit_code == 1
    [error] = [f for f in data["findings"] if f["rule"] == "PRT812"]
    assert error["severity"] == "error" and "not idempotent" in error["message"]
    assert "house.py" in error["message"] and "Bump" in error["message"] and error["path"] == "train.py"
    done = porter.convert(root / "src", diff=True)
    assert b"counter = 2" not in done.patch and b".mlu()" in done.patch  # porter's own edits go on


RAISES = """
import libcst as cst
from libcst.codemod import VisitorBasedCodemodCommand


class Boom(VisitorBasedCodemodCommand):
    CODE = "PRT813"
    DESCRIPTION = "raises on `boom`"
    NAMES = ["boom"]

    def visit_Name(self, node):
        if node.value == "boom":
            raise RuntimeError("cannot handle boom")
"""


def test_a_codemod_that_raises_on_a_file_is_an_error_naming_both_and_the_run_goes_on(tmp_path):
    root = project(
        tmp_path, RAISES, {"src/bad.py": "import torch\nboom = torch.zeros(1).cuda()\n", "src/other.py": OTHER}
    )
    result, data = check_json(root)
    [error] = [f for f in data["findings"] if f["rule"] == "PRT813"]
    assert error["path"] == "bad.py" and str(root / "porter_rules" / "house.py") in error["message"]
    assert "RuntimeError: cannot handle boom" in error["message"]
    done = porter.convert(root / "src", diff=True)
    assert done.patch.count(b".mlu()") == 2  # both files still converted by porter's rules


def test_a_codemod_that_writes_code_that_does_not_parse_is_an_error_naming_it(tmp_path):
    source = NOT_IDEMPOTENT.replace(
        "def leave_Integer(self, original_node, updated_node):\n        return updated_node.with_changes(value=str(int(updated_node.value) + 1))",
        "def leave_Name(self, original_node, updated_node):\n        return updated_node.with_changes(value='if')",
    )
    root = project(tmp_path, source, {"src/train.py": "import torch\ncounter = 1\nx = torch.zeros(2).cuda()\n"})
    [error] = [f for f in porter.check(root / "src").findings if f.rule == "PRT812"]
    assert "Bump" in error.message and "does not parse" in error.message
    done = porter.convert(root / "src", diff=True)
    assert b"if = 1" not in done.patch and b".mlu()" in done.patch and done.failed_files == ()


@pytest.mark.parametrize(
    "source,needle",
    [
        pytest.param(
            "import libcst\nraise ImportError('no mycorp here')\n",
            "cannot be imported: ImportError: no mycorp here",
            id="import-fails",
        ),
        pytest.param("def broken(:\n", "cannot be imported: SyntaxError", id="syntax"),
        pytest.param(
            "from libcst.codemod import VisitorBasedCodemodCommand\n\n"
            "class NoCode(VisitorBasedCodemodCommand):\n    DESCRIPTION = 'x'\n    NAMES = ['x']\n",
            "declares no codemod with a CODE",
            id="no-code",
        ),
        pytest.param(
            RAISES.replace("PRT813", "PRT101"), "CODE PRT101 is taken by a rule of porter's", id="porter-code"
        ),
        pytest.param(RAISES.replace('"PRT813"', '"PRJ813"'), "CODE must be a code such as", id="bad-code"),
        pytest.param(RAISES.replace('NAMES = ["boom"]', ""), "NAMES must be a non-empty list", id="no-names"),
        pytest.param(
            RAISES.replace('NAMES = ["boom"]', 'NAMES = ["boom"]\n    NAME = "cuda-method"'),
            "NAME cuda-method is the name of another rule",
            id="porter-name",
        ),
    ],
)
def test_a_broken_codemod_file_is_reported_with_its_path_and_the_rest_of_the_run_goes_on(tmp_path, source, needle):
    root = project(tmp_path, source)
    path = str(root / "porter_rules" / "house.py")
    result, data = check_json(root)
    assert result.exit_code == 2
    assert needle in result.stderr and path in result.stderr
    assert {f["rule"] for f in data["findings"]} >= {"PRT104"}  # porter's own findings are still reported
    converted = invoke("convert", root / "src", "-o", tmp_path / "out", "--no-cache")
    assert converted.exit_code == 1 and needle in converted.stderr and path in converted.stderr
    report = json.loads((tmp_path / "out" / "porter_report" / "report.json").read_text())
    assert [f["status"] for f in report["files"] if f["path"] == path] == ["failed"]
    assert (tmp_path / "out" / "train.py").read_text().count(".mlu()") == 1


def test_without_libcst_a_configuration_naming_codemods_says_how_to_install_it(tmp_path, monkeypatch):
    root = project(tmp_path)
    for name in [m for m in sys.modules if m == "libcst" or m.startswith("libcst.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "libcst", None)  # `import libcst` raises ImportError
    result = invoke("check", root / "src", "--no-cache")
    assert result.exit_code == 2
    assert 'pip install "cuda-porter[codemods]"' in result.output
    assert str(root / "porter_rules" / "house.py") in result.output and "key 'codemods'" in result.output
    converted = invoke("convert", root / "src", "-o", tmp_path / "out")
    assert converted.exit_code == 2 and 'pip install "cuda-porter[codemods]"' in converted.output


def test_a_toml_rule_cannot_claim_the_codemod_kind(tmp_path):
    rule = (
        '[[rule]]\ncode = "PRT801"\nname = "x"\nkind = "codemod"\nsummary = "s"\nwhy = "w"\nseverity = "error"\n'
        'applicability = "manual"\nfile = "a.py"\nclass = "A"\nnames = ["a"]\ndigest = "0"\nexamples = [{ before = "a" }]\n'
    )
    root = project(tmp_path, config='target = "mlu"\nrules = ["porter_rules/*.toml"]\n')
    (root / "porter_rules" / "house.toml").write_text(rule)
    result = invoke("check", root / "src", "--no-cache")
    assert result.exit_code == 2 and "'codemod' rules are declared by a codemod file" in result.output


def test_rules_lists_the_projects_own_rules_found_from_the_working_directory_or_config(tmp_path, monkeypatch):
    root = project(
        tmp_path, config='target = "mlu"\nrules = ["porter_rules/*.toml"]\ncodemods = ["porter_rules/*.py"]\n'
    )
    from test_project_rules import RULE  # the project rule that test module checks

    (root / "porter_rules" / "house.toml").write_text(RULE)
    monkeypatch.chdir(root / "src")
    listed = invoke("rules", "-t", "mlu")
    assert listed.exit_code == 0, listed.output
    assert re.search(r"^PRT801  mlu  house-fused-adam", listed.output, re.M)
    assert re.search(r"^PRT811  mlu  device-sync +mycorp.cuda_sync\(\) is mycorp.device_sync\(\)", listed.output, re.M)
    explained = invoke("rules", "PRT811")
    assert "kind codemod" in explained.output and str(root / "porter_rules" / "house.py") in explained.output
    assert "PRT811" not in invoke("rules", "--isolated").output
    monkeypatch.chdir(tmp_path)
    assert "PRT811" not in invoke("rules").output  # no configuration here
    assert "PRT811  hip" in invoke("rules", "--config", root / "porter.toml").output


def test_readme_codemod_example_is_the_shipped_example_and_runs(tmp_path):
    readme = (REPO / "README.md").read_text()
    block = readme.split("(examples/codemod_project):\n\n```python\n", 1)[1].split("```", 1)[0]
    assert block == (EXAMPLE / "porter_rules" / "device_sync.py").read_text()
    root = tmp_path / "codemod_project"
    shutil.copytree(EXAMPLE, root)
    load_rules.cache_clear()
    result = invoke("convert", root / "src", "--no-cache")
    assert result.exit_code == 0, result.output
    assert (root / "src_mlu" / "train.py").read_text().endswith("mycorp.device_sync()\n")
    checked = invoke("check", root / "src", "--no-cache", "--select", "PRT811")
    assert re.search(r"^warning PRT811 \S*src/train\.py:8:8 ", checked.output, re.M), checked.output


def test_a_codemod_for_other_targets_does_not_run(tmp_path):
    source = RENAME.format(log=str(tmp_path / "parsed.log"), new="device_sync").replace(
        'NAMES = ["cuda_sync"]', 'NAMES = ["cuda_sync"]\n    TARGETS = ["hip"]'
    )
    root = project(tmp_path, source)
    assert "PRT811" not in {f.rule for f in porter.check(root / "src").findings}
    assert not parsed(tmp_path)
    assert "PRT811" in {f.rule for f in porter.check(root / "src", target="hip").findings}


@pytest.mark.parametrize(
    "before,after",
    [
        ("a = 1\nb = 2\n", "a = 1\nb = 3\n"),
        ("a = 1\nb = 2\nc = 3\n", "a = 1\nc = 3\n"),  # a line removed
        ("a = 1\n", "import x\na = 1\nb = 2\n"),  # lines added before and after
        ("f(a,\n  b)\n", "f(a, b)\n"),  # two lines joined
        ("x = 'é'\r\ny = 1\r\n", "x = 'é'\r\ny = 2\r\n"),  # \r\n and non-ASCII kept
    ],
)
def test_span_edits_rebuild_the_codemods_output_touching_only_what_changed(before, after):
    from porter.core.edits import apply_edits
    from porter.core.model import Edit
    from porter.python.codemods import span_edits

    edits = span_edits(before, after)
    assert apply_edits(before, [Edit("PRT811", s, e, r) for s, e, r in edits]) == after
    changed = sum(e - s for s, e, _ in edits)
    assert changed <= sum(len(x) for x in before.splitlines(keepends=True) if x not in after.splitlines(keepends=True))
