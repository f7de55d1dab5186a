"""A tree-level fact reaching a Python rule: the project's transformers pin decides PRT313.

transformers' is_torch_bf16_gpu_available() knows MLU from 5.4.0 (PR #44381); a project whose
own requirements guarantee that release gets no finding, one that admits older releases (or
names none) does. The runner reads the pins once, and the cache key says which rules they
turned off, so a changed pin is never answered from the cache.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.engine.cache import ResultCache, decode_file_check, encode_file_check
from porter.engine.runner import check_tree
from porter.filetypes.pins import ProjectPins, parse_condition, project_off, read_pins
from porter.rules import TARGETS, ActiveRules, load_rules

CODE = """\
import torch
from transformers.utils import is_torch_bf16_gpu_available


def dtype():
    return torch.bfloat16 if is_torch_bf16_gpu_available() else torch.float16
"""


def _tree(tmp_path: Path, pins: dict[str, str]) -> Path:
    for name, text in pins.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "train.py").write_text(CODE)
    return tmp_path


def _codes(src: Path, target: str = "mlu", cache: ResultCache | None = None) -> list[str]:
    return [f.rule for r in check_tree(src, ActiveRules(load_rules(target)), jobs=1, cache=cache) for f in r.findings]


@pytest.mark.parametrize(
    ("pins", "reported"),
    [
        ({}, True),  # no pin: nothing is known
        ({"requirements.txt": "transformers>=4.37.2\n"}, True),  # LLaMA-Factory v0.6.0
        (
            {
                "pyproject.toml": '[project]\nname = "x"\nversion = "1"\ndependencies = ["transformers>=4.55.0,<=5.8.0,!=5.6.0"]\n'
            },
            True,
        ),
        ({"requirements.txt": "transformers>=5.4.0\n"}, False),
        ({"requirements.txt": "transformers==5.6.1\n"}, False),
        ({"requirements.txt": "transformers~=5.5\n"}, False),
        (
            {"setup.py": 'from setuptools import setup\nsetup(name="x", install_requires=["transformers>=5.4"])\n'},
            False,
        ),
        (
            {
                "setup.py": 'from setuptools import setup\nREQ = ["transformers>=4.40"]\nsetup(name="x", install_requires=REQ)\n'
            },
            True,
        ),
        ({"setup.cfg": "[options]\ninstall_requires =\n    transformers>=5.10\n"}, False),
        # Two places, one admits older releases: pip may install from that one.
        (
            {
                "requirements.txt": "transformers>=5.4.0\n",
                "pyproject.toml": '[project]\nname = "x"\nversion = "1"\ndependencies = ["transformers"]\n',
            },
            True,
        ),
    ],
)
def test_the_pin_decides(tmp_path, pins, reported):
    assert ("PRT313" in _codes(_tree(tmp_path, pins))) is reported


def test_rocm_reports_cuda_so_hip_has_no_such_rule(tmp_path):
    assert "PRT313" not in _codes(_tree(tmp_path, {}), "hip")


def test_a_changed_pin_is_not_answered_from_the_cache(tmp_path):
    cache = ResultCache(tmp_path / "cache", encode_file_check, decode_file_check)
    (tmp_path / "src").mkdir()
    src = _tree(tmp_path / "src", {})
    (src / "requirements.txt").write_text("transformers>=4.40\n")
    assert "PRT313" in _codes(src, cache=cache)
    (src / "requirements.txt").write_text("transformers>=5.4.0\n")
    assert "PRT313" not in _codes(src, cache=cache)
    (src / "requirements.txt").write_text("transformers>=4.40\n")
    assert "PRT313" in _codes(src, cache=cache)  # and back: the first answer, from the cache, is right


def test_rules_without_a_condition_read_no_pins(tmp_path, monkeypatch):
    import porter.filetypes.pins as pins

    monkeypatch.setattr(pins, "read_pins", lambda root: pytest.fail("pins read without a conditional rule"))
    rules = ActiveRules(load_rules("hip"))
    assert project_off(rules, tmp_path) is rules


def test_broken_pin_files_say_nothing(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project\ndependencies = ['transformers>=5.4']\n")
    (tmp_path / "setup.py").write_text("def (:\n    install_requires=['transformers>=5.4']\n")
    (tmp_path / "setup.cfg").write_text("[options\ninstall_requires = transformers>=5.4\n")
    assert read_pins(tmp_path, {"transformers"}) == ProjectPins(())
    (tmp_path / "requirements.txt").write_text("transformers{{ transformers_version }}\n")  # a template
    assert not read_pins(tmp_path, {"transformers"}).guarantees("transformers>=5.4.0")


def test_every_condition_in_the_rules_parses():
    for target in TARGETS:
        for rule in load_rules(target).rules:
            if rule.params.reporting.unless_pinned:
                parse_condition(rule.params.reporting.unless_pinned)
    with pytest.raises(ValueError):
        parse_condition("transformers<5")


def test_the_pins_decision_is_remembered_while_the_pin_files_are_unchanged(tmp_path, monkeypatch):
    """A re-run with a cache does not read the pin files again (the packaging library is a
    cost on every run) until one of them changes, even with its modification time set back."""
    import os

    import porter.engine.tree_index
    import porter.filetypes.pins as pins

    monkeypatch.setattr(porter.engine.tree_index, "RACY_NS", 0)
    cache = ResultCache(tmp_path / "cache", encode_file_check, decode_file_check)
    (tmp_path / "src").mkdir()
    src = _tree(tmp_path / "src", {"requirements.txt": "transformers>=5.4.0\n"})
    reads: list[Path] = []
    real = pins.read_pins
    # The reads for PRT313's condition (PRT510's words read cpm-kernels, remembered alike).
    monkeypatch.setattr(
        pins, "read_pins", lambda root, wanted: ("transformers" in wanted and reads.append(root)) or real(root, wanted)
    )
    assert "PRT313" not in _codes(src, cache=cache) and len(reads) == 1
    assert "PRT313" not in _codes(src, cache=cache) and len(reads) == 1  # remembered
    pinned = src / "requirements.txt"
    st = pinned.stat()
    pinned.write_text("transformers>=4.4.0\n")  # same size
    os.utime(pinned, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert "PRT313" in _codes(src, cache=cache) and len(reads) == 2
    (src / "setup.py").write_text('from setuptools import setup\nsetup(install_requires=["transformers>=5.4.0"])\n')
    assert "PRT313" in _codes(src, cache=cache) and len(reads) == 3  # a new pin file is looked at too


def test_plain_pins_are_compared_as_packaging_compares_them():
    """Plain numeric pins are decided without the packaging library, with its answers."""
    from packaging.version import Version

    from porter.filetypes.pins import ProjectPins, _lower_bound, _plain_lower_bound

    specifiers = [
        ">=4.55.0,<=5.8.0,!=4.57.0",
        ">=5.4",
        ">=5.4.0.0",
        "==5.4.*",
        ">5.3.9",
        "~=5.4.1",
        "===5.4.0",
        "<=6.0",
        "",
        ">= 5.10 , != 5.11",
        "==5.4.0rc1",
        ">=5.4.0.post1",
        "!=5.*,>=5.4",
        ">=5.4.*",
        "latest",
        "~=5",
        "==5.4.0+cu1",
        ">=5.4,",
    ]
    for spec in specifiers:
        plain = _plain_lower_bound(spec)
        if plain is not None:
            assert Version(".".join(map(str, plain)) or "0") == _lower_bound(spec), spec
        for minimum in ("5.4.0", "5.4", "5.10", "5.4.0rc1"):
            pins = ProjectPins((("transformers", spec),))
            try:
                expected = _lower_bound(spec) >= Version(minimum)
            except Exception:
                expected = False
            assert pins.guarantees(f"transformers>={minimum}") == expected, (spec, minimum)
    assert _plain_lower_bound("==5.4.0rc1") is None and _plain_lower_bound(">=5.4.*") is None


@pytest.mark.parametrize("target", TARGETS)
def test_what_a_flag_needs_follows_what_the_project_requires(tmp_path, target):
    """ChatGLM's --quantization_bit calls the model's own quantize(), whose kernels are
    cpm_kernels' (its requirements name cpm_kernels): PRT510 says so, not that it needs
    bitsandbytes; a project without cpm_kernels (LLaMA-Factory) keeps the bitsandbytes words,
    and a changed requirement is not answered from the cache."""
    cache = ResultCache(tmp_path / "cache", encode_file_check, decode_file_check)
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.sh").write_text("python3 main.py --do_train --quantization_bit 4\n")

    def said() -> str:
        checked = check_tree(src, ActiveRules(load_rules(target)), jobs=1, cache=cache)
        return next(f.message for r in checked for f in r.findings if f.rule == "PRT510")

    (src / "requirements.txt").write_text("transformers==4.27.1\n")
    assert "bitsandbytes" in said()
    (src / "requirements.txt").write_text("transformers==4.27.1\ncpm_kernels\n")
    assert "its own quantize(), whose kernels are cpm_kernels'" in said() and "bitsandbytes" not in said()
