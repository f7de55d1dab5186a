"""The releases that work on a target line: the package table's `releases` fields, the check of
a pin against them (PRT421/PRT422), the torch/torchvision/torchaudio pairs, and the pip
constraints file a convert writes (porter_report/requirements-<target>.txt)."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.filetypes.constraints import derive_constraints, render_constraints
from porter.tables.packages import load_package_table, parse_package_table
from porter.tables.requirement_policy import releases_check
from porter.tables.torch_pairs import load_torch_pairs, pair_for
from porter.tables.versions import available_versions


@pytest.mark.parametrize(
    "written,working,expected",
    [
        ("==4.30.2", ">=4.40.0", ("releases-excluded", ">=4.40.0")),
        ("<=4.39.3", ">=4.40.0", ("releases-excluded", ">=4.40.0")),
        ("~=4.35.0", ">=4.40.0", ("releases-excluded", ">=4.40.0")),
        (">=4.30", ">=4.40.0", ("releases-admitted", ">=4.40.0")),
        (">=4.30,<4.50,!=4.45.0", ">=4.40.0", ("releases-admitted", ">=4.40.0,<4.50,!=4.45.0")),
        (">4.39", ">=4.40.0", ("releases-admitted", ">=4.40.0")),  # admits 4.39.1
        (">=4.41.2,<=4.46.1", ">=4.40.0", None),
        ("<4.50", ">=4.40.0", None),  # no floor: pip takes the newest below the cap
        ("==2.0.1", "==2.4.0", ("releases-excluded", "==2.4.0")),
        (">=2.5", "==2.4.0", ("releases-excluded", "==2.4.0")),
        (">=2.0", "==2.4.0", None),  # the vendor's torch satisfies it: pip keeps it
        ("==2.4.*", "==2.4.0", None),
        (">=0.19.0", "==0.16.0", ("releases-excluded", "==0.16.0")),
    ],
)
def test_releases_check(written: str, working: str, expected) -> None:
    assert releases_check(written, working) == expected


def test_an_unreadable_specifier_is_not_judged() -> None:
    assert releases_check(">=four", ">=4.40.0") is None


def _table(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "packages.toml"
    path.write_text(
        'schema = 1\ntarget = "mlu"\n[packages.lib]\naction = "keep"\nimport_names = ["lib"]\n'
        'reason = "r"\nsource = "s"\nseverity = "info"\n' + body
    )
    return path


@pytest.mark.parametrize(
    "body,problem",
    [
        ('releases = ">=1.0"\n', "packages.lib.releases_why: required"),
        (
            'releases = "at least one"\nreleases_why = "w"\nreleases_source = "s"\n',
            "packages.lib.releases: 'at least one' is not a PEP 440",
        ),
        (
            'releases_by_line = { "2.4" = "=>1" }\nreleases_why = "w"\nreleases_source = "s"\n',
            "packages.lib.releases_by_line.2.4",
        ),
        ('[packages.lib.lines."2.4"]\ncolour = "red"\n', "packages.lib.lines.2.4.colour: not a per-line field"),
        ('[packages.lib.lines."2.4"]\naction = "replace"\n', "packages.lib.lines.2.4.replacement: required"),
        ('[packages.lib.lines."2.4"]\nseverity = "fatal"\n', "packages.lib.lines.2.4.severity"),
    ],
)
def test_release_fields_are_validated(tmp_path: Path, body: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem.replace(".", r"\.").replace("(", r"\(")):
        parse_package_table(_table(tmp_path, body), "mlu")


def test_a_line_changes_the_action_and_releases(tmp_path: Path) -> None:
    path = _table(
        tmp_path,
        'releases = ">=1.0"\nreleases_by_line = { "2.4" = ">=2.0" }\nreleases_why = "w"\n'
        'releases_source = "s"\n[packages.lib.lines."2.1"]\naction = "replace"\nreplacement = "lib-mlu"\n',
    )
    table = parse_package_table(path, "mlu")
    entry = table.by_distribution("lib")
    assert (entry.releases("2.1"), entry.releases("2.4"), entry.releases(None)) == (">=1.0", ">=2.0", ">=1.0")
    assert table.for_line("2.4").by_import("lib").action == "keep"
    on_21 = table.for_line("2.1").by_distribution("lib")
    assert (on_21.action, on_21.replacement) == ("replace", "lib-mlu")


def test_torch_pairs() -> None:
    assert pair_for("2.4.0").torchvision == "0.19.0"
    patched = pair_for("2.4.1+cpu")
    assert (patched.torch, patched.torchvision, patched.torchaudio) == ("2.4.1", "0.19.1", "2.4.1")
    assert pair_for("0.4.1") is None
    assert all(pair.source for pair in load_torch_pairs().values())


@pytest.mark.parametrize("target,line", [(t, v) for t in ("mlu", "npu") for v in available_versions(t)])
def test_each_line_pins_torch_and_its_pair(target: str, line: str) -> None:
    """The torch of every line the op tables know, and the torchvision/torchaudio that pair
    with it in the pairs table: one fact, said the same in both tables."""
    table = load_package_table(target)
    torch = table.by_distribution("torch").releases(line)
    assert torch is not None and torch.startswith("=="), line
    pair = pair_for(torch.removeprefix("=="))
    assert table.by_distribution("torchvision").releases(line) == f"=={pair.torchvision}"
    assert table.by_distribution("torchaudio").releases(line) == f"=={pair.torchaudio}"


@pytest.mark.parametrize("target", ["mlu", "hip", "npu"])
def test_every_release_bound_has_a_source(target: str) -> None:
    for entry in load_package_table(target).entries.values():
        if entry.releases_any_line or entry.releases_by_line:
            assert entry.releases_why and entry.releases_source, entry.name
            assert "shared" not in entry.releases_source, entry.name


def test_constraints_follow_the_repository_and_the_line(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text(
        "torch>=2.0\ntorchvision==0.19.0+cu121\ntransformers>=4.30,<4.50\naccelerate==0.21.0\nbitsandbytes>=0.39\n"
    )
    rows = {c.name: c for c in derive_constraints(tmp_path, "mlu", "2.4")}
    assert rows["torch"].specifier == "==2.4.0"
    assert rows["torchvision"].specifier == "==0.19.0"  # the +cu121 build label is not a release
    assert rows["transformers"].specifier == ">=4.40.0,<4.50" and "floor raised" in rows["transformers"].why
    assert rows["accelerate"].pinned == "==0.21.0" and "PRT421" in rows["accelerate"].why
    assert rows["accelerate"].specifier == load_package_table("mlu").by_distribution("accelerate").releases("2.4")
    assert rows["bitsandbytes"].specifier is None
    on_21 = {c.name: c for c in derive_constraints(tmp_path, "mlu", "2.1")}
    assert on_21["torch"].specifier == "==2.1.0" and on_21["torchvision"].specifier == "==0.16.0"
    text = render_constraints(list(rows.values()), "mlu", "2.4")
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    from packaging.requirements import Requirement

    assert [Requirement(line).name for line in lines] == [c.name for c in rows.values() if c.specifier]


def test_the_torch_family_in_one_command_is_one_finding() -> None:
    """One `pip install torch==X torchvision==Y torchaudio==Z` is one decision (the line's torch
    family): one error naming the other two, not three."""
    from porter.engine.pipeline import check_bytes
    from porter.rules import ActiveRules, Selection, load_rules

    active = ActiveRules(load_rules("mlu"), Selection("2.4", ("PRT421",)))
    data = (
        b"FROM python:3.10\n"
        b"RUN pip install torch==2.8.0 torchvision==0.23.0 torchaudio==2.8.0\n"
        b"RUN pip install transformers==4.30.2\n"
    )
    findings = sorted(
        (f for f in check_bytes("Dockerfile", data, active).findings if f.rule == "PRT421"), key=lambda f: f.line
    )
    assert [f.line for f in findings] == [2, 3]
    assert "torchvision: Require torchvision==0.19.0" in findings[0].message
    assert "torchaudio: Require torchaudio==2.4.0" in findings[0].message


def test_convert_writes_the_constraints_file_and_says_how(tmp_path: Path) -> None:
    """A convert writes porter_report/requirements-mlu.txt from SRC's pins and the line, the
    report says how each line was derived, and a second run with --force writes over it (an
    earlier report folder with the file is still porter's own)."""
    import json

    from click.testing import CliRunner

    from porter.cli import main

    src = tmp_path / "repo"
    src.mkdir()
    (src / "requirements.txt").write_text("torch>=2.0\ntransformers==4.30.2\naccelerate>=0.21,<1.5\n")
    (src / "train.py").write_text("import torch\nx = torch.zeros(1).cuda()\n")
    for _ in range(2):
        result = CliRunner().invoke(
            main,
            ["convert", str(src), "--target", "mlu", "--target-version", "2.1", "--force", "--no-cache"],
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output
    report_dir = tmp_path / "repo_mlu" / "porter_report"
    text = (report_dir / "requirements-mlu.txt").read_text()
    pins = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert "torch==2.1.0" in pins and "torchvision==0.16.0" in pins
    assert "accelerate>=0.29.0,<1.5" in pins
    assert "transformers>=4.40.0,<5.0.0" in pins  # the repository's ==4.30.2 excludes them all
    report = json.loads((report_dir / "report.json").read_text())
    rows = {row["name"]: row for row in report["constraints"]["rows"]}
    assert rows["transformers"]["pinned"] == "==4.30.2" and "PRT421" in rows["transformers"]["why"]
    assert "## Environment" in (report_dir / "report.md").read_text()
    assert "requirements-mlu.txt" in (report_dir / "report.html").read_text()
    assert not (src / "porter_report").exists()


@pytest.mark.parametrize(
    "url,expected",
    [
        ("git+https://github.com/NVIDIA/apex.git@25.04", "github.com/nvidia/apex"),
        ("https://github.com/NVIDIA/apex", "github.com/nvidia/apex"),
        ("git@github.com:NVIDIA/apex.git", "github.com/nvidia/apex"),
        ("git+ssh://git@github.com/Dao-AILab/flash-attention#egg=flash-attn", "github.com/dao-ailab/flash-attention"),
        ("./apex", None),
    ],
)
def test_repository_of(url: str, expected: str | None) -> None:
    from porter.tables.packages import repository_of

    assert repository_of(url) == expected


def test_constraints_read_conda_environments_and_optional_dependencies(tmp_path: Path) -> None:
    """Pins of environment.yml (conda packages by their PyPI names, and its pip list) and of
    pyproject's optional dependencies (`pip install .[train]`) are the repository's pins too."""
    (tmp_path / "environment.yml").write_text(
        "name: demo\ndependencies:\n  - pytorch=2.1.0=py3.10_cuda11.8_0\n  - pip\n  - pip:\n    - accelerate==0.20.3\n"
    )
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "demo"\ndependencies = ["peft"]\n[project.optional-dependencies]\ntrain = ["deepspeed==0.12.6"]\n'
    )
    rows = {c.name: c for c in derive_constraints(tmp_path, "mlu", "2.4")}
    assert rows["torch"].pinned == "==2.1.0.*" and "PRT421" in rows["torch"].why
    assert rows["accelerate"].pinned == "==0.20.3"
    assert rows["deepspeed"].pinned == "==0.12.6" and rows["deepspeed"].specifier == ">=0.15.2"
