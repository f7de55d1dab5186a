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


def test_feature_modules_stay_modules():
    import porter.check as check_module
    import porter.convert as convert_module

    assert check_module is sys.modules["porter.check"] and convert_module.ConvertOptions
    assert callable(porter.check) and callable(porter.convert)
    assert porter.check(EXAMPLE, target="hip").target == "hip"


@pytest.mark.parametrize("name", ["check", "convert"])
def test_api_calls_show_their_parameters_and_docstrings(name):
    import inspect

    import porter.api

    call = getattr(porter, name)
    params = inspect.signature(call).parameters
    assert list(params) == list(inspect.signature(getattr(porter.api, name)).parameters)
    assert {"target", "select", "exclude", "config"} <= set(params) and "args" not in params
    assert getattr(porter.api, name).__doc__ in call.__doc__ and "target_version" in call.__doc__
    assert porter.FeatureModule.__doc__.startswith("A feature's module")


def test_the_other_api_names_have_real_signatures():
    import inspect

    assert "target" in inspect.signature(porter.CheckReport).parameters
    assert "start" in inspect.signature(porter.settings_for).parameters
    for name in porter.__all__:
        assert getattr(porter, name).__doc__, name


def test_py_typed_ships_with_a_stub_that_types_the_callable_features():
    """py.typed tells type checkers to trust porter's annotations; without the stub they would
    see `porter.check` as a module (not callable) or as Any."""
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
