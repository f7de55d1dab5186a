"""Configuration: [tool.porter] in pyproject.toml and porter.toml, found by walking up from
SRC, validated (unknown keys and codes exit 2 naming the file and the key), shown by
`porter config`, and overridden by command-line options."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from porter.cli import main
from porter.config import ConfigError, find_config, load_settings, read_config, with_options

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "check" / "tree"


def run(*args, cwd: Path | None = None):
    runner = CliRunner()
    if cwd is None:
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)
    with runner.isolated_filesystem(temp_dir=cwd.parent):
        import os

        old = os.getcwd()
        os.chdir(cwd)
        try:
            return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)
        finally:
            os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose tree is a sub-folder: the configuration is found above SRC."""
    root = tmp_path / "proj"
    shutil.copytree(TREE, root / "src")
    return root


def rules_of(result) -> list[str]:
    return [f["rule"] for f in json.loads(result.stdout)["findings"]]


def test_pyproject_tool_porter_is_found_from_src_and_supplies_the_target(project):
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.porter]\ntarget = "mlu"\nselect = ["PRT4"]\n'
    )
    result = run("check", project / "src", "--format", "json", "--no-cache")
    assert result.exit_code == 1, result.output
    found = rules_of(result)
    assert found and all(code.startswith("PRT4") for code in found)
    # Without a target anywhere: a usage error that says how to give one.
    (project / "pyproject.toml").write_text('[tool.porter]\nselect = ["PRT4"]\n')
    missing = run("check", project / "src", "--no-cache")
    assert missing.exit_code == 2 and "no target" in missing.output and "[tool.porter]" in missing.output


def test_porter_toml_wins_over_pyproject_in_the_same_folder_and_nearest_wins(project):
    (project / "pyproject.toml").write_text('[tool.porter]\ntarget = "hip"\n')
    (project / "porter.toml").write_text('target = "mlu"\n')
    assert find_config(project / "src") == project / "porter.toml"
    assert load_settings(project / "src").target == "mlu"
    (project / "src" / "pkg" / "pyproject.toml").write_text('[tool.porter]\ntarget = "hip"\n')
    assert find_config(project / "src" / "pkg") == project / "src" / "pkg" / "pyproject.toml"
    # A pyproject.toml without [tool.porter] is passed over.
    (project / "src" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert find_config(project / "src") == project / "porter.toml"


@pytest.mark.parametrize(
    "text,needle",
    [
        pytest.param('[tool.porter]\ntarget = "mlu"\nselct = ["PRT1"]\n', "unknown key 'selct'", id="unknown-key"),
        pytest.param('[tool.porter]\nfail_on = "warning"\n', "did you mean 'fail-on'", id="snake-case"),
        pytest.param(
            '[tool.porter]\nselect = ["PRT777"]\n', "key 'select': unknown rule code 'PRT777'", id="unknown-code"
        ),
        pytest.param('[tool.porter]\nignore = ["XYZ"]\n', "key 'ignore': unknown rule code 'XYZ'", id="not-a-code"),
        pytest.param(
            '[tool.porter]\nper-file-ignores = { "tests/*" = ["PRT99"] }\n',
            "key 'per-file-ignores'",
            id="per-file-code",
        ),
        pytest.param('[tool.porter]\nselect = "PRT1"\n', "key 'select' must be a list of rule codes", id="type"),
        pytest.param('[tool.porter]\ntarget = "cuda"\n', "key 'target' must be one of", id="target"),
        pytest.param('[tool.porter]\ntarget = "mlu"\ntarget-version = "9.9"\n', "key 'target-version'", id="version"),
        pytest.param("[tool.porter\n", "not valid TOML", id="toml"),
    ],
)
def test_bad_configuration_exits_2_naming_file_and_key(project, text, needle):
    (project / "pyproject.toml").write_text(text)
    result = run("check", project / "src", "--target", "mlu", "--no-cache", "--exit-zero")
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()  # one line, naming the file and the key
    assert line.startswith("porter: error: ") and needle in line and str(project / "pyproject.toml") in line
    with pytest.raises(ConfigError, match="pyproject.toml"):
        read_config(project / "pyproject.toml")


def test_command_line_overrides_configuration(project):
    (project / "porter.toml").write_text('target = "hip"\nfail-on = "warning"\nselect = ["PRT4"]\n')
    # The file alone: hip, warnings fail.
    assert run("check", project / "src", "--no-cache").exit_code == 1
    # --fail-on error from the command line wins: nothing on hip is an error.
    assert run("check", project / "src", "--no-cache", "--fail-on", "error").exit_code == 0
    # --target and --select win too.
    result = run("check", project / "src", "--no-cache", "--target", "mlu", "--select", "PRT401", "--format", "json")
    assert set(rules_of(result)) == {"PRT401"}
    data = json.loads(result.stdout)
    assert data["target"] == "mlu"


def test_per_file_ignores_exclude_and_baseline_are_relative_to_the_file(project):
    config = 'target = "mlu"\nper-file-ignores = { "src/train.py" = ["PRT9"] }\nexclude = ["src/pkg/layers.py"]\n'
    (project / "porter.toml").write_text(config)
    result = run("check", project / "src", "--no-cache", "--format", "json")
    found = json.loads(result.stdout)["findings"]
    assert not [f for f in found if f["path"] == "train.py" and f["rule"].startswith("PRT9")]
    assert [f for f in found if f["path"] == "train.py"]  # other codes still reported there
    assert not [f for f in found if f["path"] == "pkg/layers.py"]
    # The baseline is the configured one: written once, it accepts everything.
    assert (
        run("check", project / "src", "--no-cache", "--write-baseline", project / "porter-baseline.json").exit_code == 0
    )
    (project / "porter.toml").write_text(config + 'baseline = "porter-baseline.json"\n')
    assert run("check", project / "src", "--no-cache").exit_code == 0
    assert run("check", project / "src", "--no-cache", "--isolated", "--target", "mlu").exit_code == 1


def test_porter_config_prints_each_setting_and_its_source(project):
    (project / "pyproject.toml").write_text('[tool.porter]\ntarget = "mlu"\nignore = ["PRT903"]\n')
    result = run("config", project / "src")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    label = f"{project / 'pyproject.toml'} [tool.porter]"
    assert lines[0] == f"# settings for {project / 'src'}: {label}"
    assert any(line.startswith('target = "mlu"') and line.endswith(label) for line in lines)
    assert any(line.startswith('fail-on = "error"') and line.endswith("# default") for line in lines)
    shown = run("check", project / "src", "--show-settings", "--ignore", "PRT1", "--target", "hip")
    assert any(
        line.startswith('ignore = ["PRT903", "PRT1"]') and line.endswith(f"{label} + command line")
        for line in shown.stdout.splitlines()
    )
    assert any(
        line.startswith('target = "hip"') and line.endswith("# command line") for line in shown.stdout.splitlines()
    )


def test_option_with_unknown_code_is_a_usage_error(tmp_path):
    result = run("check", TREE, "--target", "mlu", "--select", "XYZ", "--no-cache")
    assert result.exit_code == 2 and "--select: unknown rule code 'XYZ'" in result.output
    with pytest.raises(ConfigError, match="--ignore: unknown rule code 'PRT8'"):
        with_options(load_settings(tmp_path, isolated=True), ignore=("PRT8",))
    # A prefix that some rule has is fine.
    assert with_options(load_settings(tmp_path, isolated=True), select=("PRT9",)).select == ("PRT9",)


def test_convert_rejects_unknown_codes_too(tmp_path):
    result = run("convert", TREE, "-t", "mlu", "--diff", "--select", "PRT1,PRTX", "--no-cache")
    assert result.exit_code == 2 and "unknown rule code 'PRTX'" in result.output


def test_convert_reads_the_configuration_too(tmp_path):
    """`porter convert` takes target and codes from [tool.porter] as check does; options win."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.porter]\ntarget = "mlu"\nignore = ["PRT101"]\n')
    (src / "train.py").write_text("import torch\ntorch.cuda.synchronize()\nx = torch.zeros(1).cuda()\n")
    result = CliRunner().invoke(main, ["convert", str(src), "-o", str(tmp_path / "out"), "--no-cache"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "out" / "train.py").read_text()
    assert "torch.cuda.synchronize()" in text and ".mlu()" in text  # PRT101 ignored by the configuration
    result = CliRunner().invoke(
        main, ["convert", str(src), "-o", str(tmp_path / "out2"), "--no-cache", "--target", "hip"]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out2" / "train.py").read_text().count("cuda") == 2  # HIP keeps CUDA's names
    (src / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.porter]\ntarget = "mlu"\nignor = ["PRT101"]\n')
    result = CliRunner().invoke(main, ["convert", str(src), "-o", str(tmp_path / "out3"), "--no-cache"])
    assert result.exit_code == 2 and "ignor" in result.output


def test_convert_takes_config_isolated_and_show_settings_as_check_does(tmp_path):
    """--config names the file, --isolated ignores every one, --show-settings prints and exits."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "porter.toml").write_text('target = "mlu"\nignore = ["PRT101"]\n')
    (src / "train.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    other = tmp_path / "other.toml"
    other.write_text('target = "mlu"\n')
    shown = run("convert", src, "--show-settings")
    assert shown.exit_code == 0 and '"PRT101"' in shown.output and "porter.toml" in shown.output
    assert not (tmp_path / "src_mlu").exists()
    configured = run("convert", src, "--diff", "--no-cache")
    assert configured.exit_code == 0 and "torch.mlu.synchronize" not in configured.output
    named = run("convert", src, "--diff", "--no-cache", "--config", other)
    assert named.exit_code == 0 and "torch.mlu.synchronize" in named.output
    isolated = run("convert", src, "--diff", "--no-cache", "--isolated")
    assert isolated.exit_code == 2 and "no target" in isolated.output


def test_lora_reads_the_target_from_the_configuration_and_the_option_wins(tmp_path):
    """`porter lora TREE` takes `target` from TREE's configuration as convert and check do."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "train.py").write_text("import torch\n")

    def header(out: Path) -> str:
        return (out / "run_lora.sh").read_text().split("\n")[1]

    missing = run("lora", tree, "-o", tmp_path / "none")
    assert missing.exit_code == 2 and "no target" in missing.output and not (tmp_path / "none").exists()
    (tree / "porter.toml").write_text('target = "hip"\n')
    assert run("lora", tree, "-o", tmp_path / "configured").exit_code == 0
    assert 'target "hip"' in header(tmp_path / "configured")
    assert run("lora", tree, "-o", tmp_path / "option", "--target", "mlu").exit_code == 0
    assert 'target "mlu"' in header(tmp_path / "option")
    (tree / "porter.toml").write_text('target = "hip"\ntarget_version = "2.4"\n')
    bad = run("lora", tree, "-o", tmp_path / "bad")
    assert bad.exit_code == 2 and "target_version" in bad.output
