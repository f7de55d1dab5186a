"""The Python API: porter.check(...) and porter.convert(...) return typed results, read the
configuration as the commands do, and `import porter` loads none of the engine."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import porter

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "cuda_trainer"


def test_import_porter_is_cheap():
    code = "import sys, porter; print(sorted(m for m in sys.modules if m.startswith('porter') or m in ('click', 'jinja2', 'yaml', 'pathspec')))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stdout
    assert out.strip() == "['porter']"
    timing = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import porter"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stderr
    assert "porter.engine" not in timing and "porter.rules" not in timing


def test_check_returns_typed_findings_and_the_commands_exit_code():
    result = porter.check(EXAMPLE, target="mlu")
    assert isinstance(result, porter.CheckReport) and dataclasses.is_dataclass(result)
    assert result.exit_code == 1 and result.target == "mlu" and result.target_version == "2.4"
    flash = [f for f in result.findings if f.rule == "PRT405"]
    assert isinstance(flash[0], porter.Finding)
    assert (flash[0].severity, flash[0].path, flash[0].line) == ("error", "train.py", 28)
    assert result.by_severity["error"] == 2
    # Options as keyword arguments, as on the command line.
    only = porter.check(EXAMPLE, target="mlu", select=["PRT405"])
    assert {f.rule for f in only.findings} == {"PRT405"}
    assert porter.check(EXAMPLE, target="hip").exit_code == 0
    assert porter.check(EXAMPLE, target="hip", fail_on="warning").exit_code == 1


def test_check_output_is_what_the_command_prints():
    cli = subprocess.run(
        [sys.executable, "-m", "porter", "check", str(EXAMPLE), "-t", "mlu", "--no-cache", "--format", "json"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert porter.check(EXAMPLE, target="mlu").render("json") == cli.stdout


def test_check_reads_the_configuration_and_reports_its_errors(tmp_path):
    tree = Path(shutil.copytree(EXAMPLE, tmp_path / "t"))
    (tmp_path / "porter.toml").write_text('target = "mlu"\nignore = ["PRT4"]\n')
    result = porter.check(tree)
    assert result.settings.target == "mlu" and not [f for f in result.findings if f.rule.startswith("PRT4")]
    assert porter.check(tree, config=False, target="mlu").findings != result.findings
    with pytest.raises(porter.ConfigError, match="no target"):
        porter.check(tree, config=False)
    (tmp_path / "porter.toml").write_text('target = "mlu"\nignroe = ["PRT4"]\n')
    with pytest.raises(porter.ConfigError, match=r"porter.toml: unknown key 'ignroe'"):
        porter.check(tree)
    with pytest.raises(porter.ConfigError, match="unknown rule code 'PRTX'"):
        porter.check(tree, config=False, target="mlu", select="PRTX")


def test_convert_writes_out_and_returns_its_report(tmp_path):
    src = Path(shutil.copytree(EXAMPLE, tmp_path / "src"))
    done = porter.convert(src, target="mlu", jobs=1)
    assert isinstance(done, porter.ConvertReport)
    assert done.out == tmp_path / "src_mlu" and (done.out / "porter_report" / "report.json").is_file()
    assert "train.py" in done.changed_files and done.edits == done.report["summary"]["edits"] > 0
    assert any(f.rule == "PRT405" for f in done.findings)
    assert b"+import torch_mlu" in done.patch
    diff = porter.convert(src, target="mlu", diff=True)
    assert diff.out is None and diff.patch == done.patch


def test_the_api_names_are_porter_apis_and_the_features_plain_modules():
    """`porter.check` is the function of porter/api.py, before and after the modules of the
    features (porter/checker/, porter/converter/) are loaded; those are plain modules."""
    import types

    import porter.api
    import porter.checker.run
    import porter.converter.run

    assert porter.check is porter.api.check and porter.convert is porter.api.convert
    for name in ("porter.checker", "porter.checker.run", "porter.converter", "porter.converter.run"):
        assert type(sys.modules[name]) is types.ModuleType, name
    assert porter.check(EXAMPLE, target="hip").target == "hip"


def test_check_and_convert_take_one_options_type_built_once(tmp_path):
    """The commands' route: settings, then `options_for` (the target, its torch line, how the
    run goes), then the API call with `options=`; the same run as the keyword arguments make."""
    settings = porter.settings_for(EXAMPLE, False, target="mlu", select=["PRT4"])
    options = porter.options_for(settings, jobs=1)
    assert isinstance(options, porter.RunOptions) and (options.target, options.version) == ("mlu", "2.4")
    by_options = porter.check(EXAMPLE, options=options)
    assert by_options.findings == porter.check(EXAMPLE, target="mlu", select=["PRT4"], config=False).findings
    assert by_options.findings and {f.rule[:4] for f in by_options.findings} == {"PRT4"}
    src = Path(shutil.copytree(EXAMPLE, tmp_path / "src"))
    diff = porter.convert(src, options=porter.options_for(settings, diff=True))
    assert diff.out is None and diff.patch == porter.convert(src, "mlu", select="PRT4", diff=True, config=False).patch
    assert porter.options_for(porter.settings_for(EXAMPLE, False, target="hip")).version is None  # one HIP table


def test_a_run_without_a_target_or_with_another_targets_line_is_a_config_error(tmp_path):
    with pytest.raises(porter.ConfigError, match="no target: pass target='mlu' or 'hip'"):
        porter.options_for(porter.settings_for(tmp_path, False))
    tree = Path(shutil.copytree(EXAMPLE, tmp_path / "t"))
    (tree / "porter.toml").write_text('target = "mlu"\ntarget-version = "2.1"\n')
    assert porter.check(tree).target_version == "2.1"
    with pytest.raises(porter.ConfigError, match="2.1 is not a known version for hip"):
        porter.check(tree, target="hip")  # the configured line goes with the configured target only
    with pytest.raises(ValueError, match="in_place cannot be combined"):
        porter.convert(tree, in_place=True, diff=True)


def test_convert_takes_the_commands_report_folder_and_size_limit(tmp_path):
    src = Path(shutil.copytree(EXAMPLE, tmp_path / "src"))
    done = porter.convert(src, "mlu", out=tmp_path / "out", report_dir=tmp_path / "rep", max_file_size=0.0001, jobs=1)
    assert done.report_dir == tmp_path / "rep" and (tmp_path / "rep" / "report.json").is_file()
    assert done.lora_dir == tmp_path / "rep" / "porter_lora" and "train.py" not in done.changed_files
    assert {f["status"] for f in done.report["files"] if f["path"].endswith(".py")} == {"skipped"}


def test_check_takes_the_size_limit_convert_takes(tmp_path):
    """A file over the limit is skipped by check as by convert, and its reason names the option
    both accept; with no limit (0) it is checked."""
    src = Path(shutil.copytree(EXAMPLE, tmp_path / "src"))
    limited = porter.check(src, "mlu", max_file_size=0.0001, jobs=1, config=False)
    skipped = [f for f in limited.files if f.path.endswith(".py")]
    assert skipped and all(f.skipped and "--max-file-size" in f.skipped for f in skipped)
    whole = porter.check(src, "mlu", max_file_size=0, jobs=1, config=False)
    assert any(f.findings for f in whole.files if f.path.endswith(".py"))


@pytest.mark.parametrize("name", ["check", "convert"])
def test_api_calls_show_their_parameters_and_docstrings(name):
    import inspect

    import porter.api

    call = getattr(porter, name)
    params = inspect.signature(call).parameters
    assert list(params) == list(inspect.signature(getattr(porter.api, name)).parameters)
    assert {"target", "select", "exclude", "config"} <= set(params) and "args" not in params
    assert getattr(porter.api, name).__doc__ in call.__doc__ and "target_version" in call.__doc__


def test_the_other_api_names_have_real_signatures():
    import inspect

    assert "target" in inspect.signature(porter.CheckReport).parameters
    assert "start" in inspect.signature(porter.settings_for).parameters
    for name in porter.__all__:
        assert getattr(porter, name).__doc__, name


def test_py_typed_ships_with_a_stub_that_types_the_api():
    """py.typed tells type checkers to trust porter's annotations; the stub names what the
    package loads on first use, which they would otherwise not see."""
    import ast
    from importlib.resources import files

    assert files("porter").joinpath("py.typed").is_file()
    stub = ast.parse(files("porter").joinpath("__init__.pyi").read_text())
    imported = {alias.asname for node in stub.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert set(porter.__all__) - {"__version__"} <= imported


def test_wheel_and_sdist_include_py_typed():
    pytest.importorskip("hatchling")
    from hatchling.builders.sdist import SdistBuilder
    from hatchling.builders.wheel import WheelBuilder

    for builder in (WheelBuilder(str(ROOT)), SdistBuilder(str(ROOT))):
        shipped = {f.distribution_path for f in builder.recurse_included_files()}
        assert {"porter/py.typed", "porter/__init__.pyi"} <= shipped
