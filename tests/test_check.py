"""`porter check` and `porter ops` as a user and a CI job meet them: formats, exit codes,
--select/--ignore, suppressions, baselines, and that nothing is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from porter.checker.github import escape_data, escape_property
from porter.commands.check import check, ops

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "check" / "tree"


@click.group()
def cli() -> None:
    """The two commands as porter's group will hold them."""


cli.add_command(check)
cli.add_command(ops)


def run(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return Path(shutil.copytree(TREE, tmp_path / "tree"))


def findings(result) -> list[dict]:
    return json.loads(result.stdout)["findings"]


def test_text_lists_findings_then_summary_and_fails_on_errors(tree):
    result = run("check", tree, "--target", "mlu")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert f"PRT401 {tree}/train.py:3:8  imports bitsandbytes (bitsandbytes): " in result.stdout
    assert f"error   PRT901 {tree}/train.py:17:13  torch.compile: unsupported in the mlu table for torch 2.4" in lines
    assert any("Found " in line and "error" in line for line in lines)
    assert any(line.split()[1:3] == ["PRT901", "unsupported-api"] for line in lines if line.startswith("  "))
    assert "skipped pkg/broken.py: does not parse" in result.stderr


def test_exit_zero_and_fail_on(tree):
    assert run("check", tree, "--target", "mlu", "--exit-zero").exit_code == 0
    # On hip nothing in the tree is an error, but rules warn.
    assert run("check", tree, "--target", "hip").exit_code == 0
    assert run("check", tree, "--target", "hip", "--fail-on", "warning").exit_code == 1


def test_usage_errors_exit_2_even_with_exit_zero(tree, tmp_path):
    assert run("check", tree, "--target", "mlu", "--target-version", "9.9", "--exit-zero").exit_code == 2
    assert run("check", tmp_path / "missing", "--target", "mlu", "--exit-zero").exit_code == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    result = run("check", tree, "--target", "mlu", "--baseline", bad, "--exit-zero")
    assert result.exit_code == 2 and "not a porter baseline" in result.stderr


def test_check_writes_nothing(tree):
    before = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    run("check", tree, "--target", "mlu", "--format", "sarif")
    assert {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()} == before


def test_informational_findings_are_shown_only_when_selected(tree):
    """The default set holds findings that ask for action; an `info` one (PRT903: an API the
    table does not list) appears when its code, a prefix of it or ALL is selected."""

    def codes(*extra):
        return {f["rule"] for f in findings(run("check", tree, "--target", "mlu", "--format", "json", *extra))}

    assert "PRT903" not in codes()
    assert "PRT903" in codes("--extend-select", "PRT903")
    assert "PRT903" in codes("--extend-select", "PRT9")
    assert {"PRT903", "PRT101"} <= codes("--select", "ALL")


def test_json_is_the_report_findings_schema(tree):
    result = run("check", tree, "--target", "mlu", "--format", "json")
    data = json.loads(result.stdout)
    assert data["schema_version"] == 1 and data["target"] == "mlu" and data["target_version"] == "2.4"
    keys = {"rule", "severity", "path", "line", "col", "message", "suggestion", "fingerprint"}
    assert all(keys <= set(f) for f in data["findings"])
    codes = {f["rule"] for f in data["findings"]}
    assert {"PRT401", "PRT402", "PRT101", "PRT901", "PRT902"} <= codes
    assert "PRT403" not in codes  # load_in_4bit=True inside BitsAndBytesConfig(...): PRT402 reports the call
    assert "PRT903" not in codes  # informational (an API the table does not list): shown when selected
    assert data["summary"]["findings_by_severity"]["error"] >= 4
    assert data["summary"]["apis_by_status"]["unsupported"] >= 2
    rewritten = [f for f in data["findings"] if f["rule"] == "PRT101"]
    assert rewritten and rewritten[0]["message"].startswith(
        "would be rewritten: torch.cuda.synchronize -> torch.mlu.synchronize"
    )


def test_select_and_ignore_by_prefix(tree):
    only9 = {f["rule"] for f in findings(run("check", tree, "--target", "mlu", "--format", "json", "--select", "PRT9"))}
    assert only9 and all(code.startswith("PRT9") for code in only9)
    rest = {
        f["rule"] for f in findings(run("check", tree, "--target", "mlu", "--format", "json", "--ignore", "PRT9,PRT1"))
    }
    assert rest and not any(code.startswith(("PRT9", "PRT1")) for code in rest)
    result = run("check", tree, "--target", "mlu", "--select", "PRT903")
    assert result.exit_code == 0  # only info findings left


def test_suppression_removes_exactly_its_finding(tree):
    base = findings(run("check", tree, "--target", "mlu", "--format", "json"))
    line = 13  # F.scaled_dot_product_attention(torch.logit(...)): PRT902 and PRT901
    assert {f["rule"] for f in base if f["path"] == "train.py" and f["line"] == line} == {"PRT901", "PRT902"}
    path = tree / "train.py"
    lines = path.read_text().splitlines()
    lines[line - 1] += "  # porter: ignore[PRT901]"
    path.write_text("\n".join(lines) + "\n")
    after = findings(run("check", tree, "--target", "mlu", "--format", "json"))
    gone = {(f["path"], f["line"], f["rule"]) for f in base} - {(f["path"], f["line"], f["rule"]) for f in after}
    assert gone == {("train.py", line, "PRT901")}
    assert len(after) == len(base) - 1


def test_suppression_in_a_string_does_not_count(tree):
    path = tree / "pkg" / "layers.py"
    path.write_text(path.read_text().replace("x.logit()", 'x.logit(), "# porter: ignore[PRT901]"'))
    after = findings(run("check", tree, "--target", "mlu", "--format", "json", "--select", "PRT901"))
    assert any(f["path"] == "pkg/layers.py" for f in after)


def test_baseline_accepts_old_findings_after_lines_move_and_fails_on_new(tree, tmp_path):
    baseline = tmp_path / "porter-baseline.json"
    result = run("check", tree, "--target", "mlu", "--write-baseline", baseline)
    assert result.exit_code == 0 and baseline.is_file()
    assert run("check", tree, "--target", "mlu", "--baseline", baseline).exit_code == 0
    path = tree / "train.py"
    path.write_text("# a comment that moves every line down\n\n" + path.read_text())
    moved = run("check", tree, "--target", "mlu", "--baseline", baseline)
    assert moved.exit_code == 0, moved.stdout
    assert "accepted by the baseline" in moved.stdout
    path.write_text(path.read_text() + "\n\ndef more(x):\n    return torch.logit(x)\n")
    new = run("check", tree, "--target", "mlu", "--baseline", baseline, "--format", "json")
    assert new.exit_code == 1
    assert [(f["rule"], f["subject"]) for f in findings(new)] == [("PRT901", "torch.logit")]


def test_baseline_for_another_target_is_refused(tree, tmp_path):
    baseline = tmp_path / "b.json"
    run("check", tree, "--target", "hip", "--write-baseline", baseline)
    result = run("check", tree, "--target", "mlu", "--baseline", baseline)
    assert result.exit_code == 2 and "--target hip" in result.stderr


def test_github_annotations(tree):
    result = run("check", tree, "--target", "mlu", "--format", "github")
    commands = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert commands[0].startswith("::error file=")  # errors first: GitHub shows only 10 per type
    assert any(c.startswith("::warning ") for c in commands) and any(c.startswith("::notice ") for c in commands)
    assert all("\n" not in c for c in commands)
    first = commands[0]
    assert ",line=" in first and ",col=" in first and ",title=PRT" in first


def test_github_summary_mentions_the_limit(tree):
    path = tree / "many.py"
    path.write_text("import torch\n" + "".join(f"torch.logit(x{i})\n" for i in range(12)))
    result = run("check", tree, "--target", "mlu", "--format", "github")
    assert "GitHub shows only the first 10 annotations" in result.stdout


@pytest.mark.parametrize(
    "value,data,prop",
    [
        pytest.param("a%b", "a%25b", "a%25b", id="percent"),
        pytest.param("l1\nl2\r", "l1%0Al2%0D", "l1%0Al2%0D", id="newlines"),
        pytest.param("f.py:3,x", "f.py:3,x", "f.py%3A3%2Cx", id="colon-comma"),
    ],
)
def test_github_escaping(value, data, prop):
    assert escape_data(value) == data
    assert escape_property(value) == prop


def test_ops_tells_status_note_version_and_counterpart():
    result = run("ops", "torch.nn.functional.scaled_dot_product_attention", "--target", "mlu")
    assert result.exit_code == 0
    assert "partial in the mlu table for torch 2.4" in result.stdout
    assert "note: No nested-tensor input" in result.stdout
    assert "torch 2.1: partial" in result.stdout
    cuda = run("ops", "torch.cuda.synchronize", "--target", "mlu")
    assert "counterpart: torch.mlu.synchronize" in cuda.stdout
    alias = run("ops", "F.pad", "--target", "mlu", "--target-version", "2.1")
    assert alias.stdout.startswith("torch.nn.functional.pad: partial in the mlu table for torch 2.1")
    hip = run("ops", "torch.cuda.synchronize", "--target", "hip")
    assert "supported in the hip table (any torch version)" in hip.stdout and "matched by: torch.cuda.*" in hip.stdout
    assert run("ops", "x", "--target", "mlu", "--target-version", "0.1").exit_code == 2


def test_internal_error_exits_2(tree, monkeypatch):
    import porter.engine.pipeline as pipeline

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(pipeline, "find", boom)
    result = run("check", tree, "--target", "mlu", "--exit-zero", "--jobs", "1", "--no-cache")
    assert result.exit_code == 2 and "internal error: RuntimeError: boom" in result.stderr


def test_llama_factory_mlu(llama_factory):
    lf = llama_factory
    result = run("check", lf, "--target", "mlu", "--format", "json")
    assert result.exit_code == 1
    found = findings(result)
    quant = [f for f in found if f["rule"] in ("PRT402", "PRT403", "PRT404") or f.get("subject") == "bitsandbytes"]
    assert any(f["path"].endswith("model/model_utils/quantization.py") for f in quant)
    # Its only "unsupported" APIs are host code or composite ops (numel, cudnn flags,
    # logsumexp): notes, never errors, outside the default set.
    assert not [f for f in found if f["rule"] == "PRT901"]
    notes = [
        f
        for f in findings(run("check", lf, "--target", "mlu", "--format", "json", "--extend-select", "PRT901"))
        if f["rule"] == "PRT901"
    ]
    assert notes and all(f["severity"] == "info" and f["line"] > 0 and f["path"].endswith(".py") for f in notes)
    assert run("check", lf, "--target", "mlu", "--exit-zero").exit_code == 0


def test_ci_files_run_porter_check():
    yaml = pytest.importorskip("yaml")
    root = TREE.parents[2]
    (hook,) = yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "porter-check" and hook["entry"].startswith("porter check") and hook["pass_filenames"] is True
    assert hook["language"] == "python" and "." not in hook["entry"].split()
    workflow = yaml.safe_load((root / "examples" / "github-workflow-porter-check.yml").read_text())
    steps = workflow["jobs"]["porter"]["steps"]
    runs = [s.get("run", "") for s in steps]
    assert any("--format sarif" in r and "--exit-zero" in r for r in runs)
    assert any("--format github" in r for r in runs)
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif") for s in steps)


def test_ops_only_is_what_convert_adds_to_its_report():
    from porter.checker.model import api_counts, api_statuses
    from porter.engine.runner import check_tree
    from porter.rules import ActiveRules, Selection, load_rules

    files = check_tree(TREE, ActiveRules(load_rules("mlu"), Selection("2.4", kinds=("op-table",), extend=("PRT9",))))
    assert {f.rule for file in files for f in file.findings} == {"PRT901", "PRT902", "PRT903"}
    counts = api_counts(files)
    assert set(counts) == {"supported", "partial", "unsupported", "unknown"}
    assert counts["unsupported"] == 3  # torch.logit, torch.compile, torch.Tensor.logit
    assert api_statuses(files)["torch.nn.functional.scaled_dot_product_attention"] == "partial"


def test_format_choices_match_the_renderers():
    from porter.checker.formats import RENDERERS

    assert set(check.params[[p.name for p in check.params].index("fmt")].type.choices) == set(RENDERERS)


def test_a_rename_with_advice_is_one_line_per_call(tmp_path: Path) -> None:
    """torch.cuda.ipc_collect() is renamed (PRT109) with advice for 2.1 containers: check shows
    that rename once, not a rewrite and a report of the same call."""
    (tmp_path / "train.py").write_text("import torch\n\n\ndef f():\n    torch.cuda.ipc_collect()\n")
    result = CliRunner().invoke(check, [str(tmp_path), "--target", "mlu", "--format", "json", "--no-cache"])
    findings = [f for f in json.loads(result.output)["findings"] if f["rule"] == "PRT109"]
    assert len(findings) == 1 and findings[0]["line"] == 5
