"""The one find-and-fix path: every file type is found, suppressed, applied and reported the
same way by convert and check (porter/engine/pipeline.py, porter/core/edits.py)."""

from __future__ import annotations

import pytest

from porter.engine.pipeline import check_bytes, convert_bytes
from porter.rules import ActiveRules, load_rules

MLU = ActiveRules(load_rules("mlu"))

# (file name, text whose one edit a rule makes, that rule's code)
ONE_EDIT = [
    pytest.param("requirements.txt", "bitsandbytes==0.41.0{comment}\n", "PRT410", id="requirements"),
    pytest.param("run.sh", "export CUDA_VISIBLE_DEVICES=0{comment}\npython train.py\n", "PRT501", id="shell"),
    pytest.param("train.py", "import torch\nx = torch.zeros(2).cuda(){comment}\n", "PRT104", id="python"),
    pytest.param("train.yaml", "model_name_or_path: m\nflash_attn: fa2{comment}\n", None, id="yaml"),
]


def _rule_of(name: str, text: str) -> str:
    _, result = convert_bytes(name, text.format(comment="").encode(), MLU)
    assert result.status == "changed", result.reason
    return result.edits[-1].rule


@pytest.mark.parametrize(("name", "text", "code"), ONE_EDIT)
def test_a_suppression_comment_is_honoured_in_every_file_type(name, text, code):
    code = code or _rule_of(name, text)
    data = text.format(comment=f"  # porter: ignore[{code}]").encode()
    _, result = convert_bytes(name, data, MLU)
    assert result.status == "unchanged" and result.new_bytes is None
    assert code not in {f.rule for f in result.findings}
    assert code not in {f.rule for f in check_bytes(name, data, MLU).findings}


def test_suppressing_the_only_edit_adds_no_import():
    """The import of torch_mlu comes with edits; a suppressed edit is no edit."""
    data = b"import torch\nx = torch.zeros(2).cuda()  # porter: ignore[PRT104]\n"
    _, result = convert_bytes("train.py", data, MLU)
    assert result.status == "unchanged", result.edits
    assert not any(f.rule == "PRT107" for f in check_bytes("train.py", data, MLU).findings)


def test_another_edit_still_brings_the_import():
    data = b"import torch\nx = torch.zeros(2).cuda()  # porter: ignore[PRT104]\ntorch.cuda.synchronize()\n"
    _, result = convert_bytes("train.py", data, MLU)
    assert result.new_bytes == (
        b"import torch\nimport torch_mlu  # noqa: F401\nx = torch.zeros(2).cuda()  # porter: ignore[PRT104]\n"
        b"torch.mlu.synchronize()\n"
    )


@pytest.mark.parametrize(("name", "text", "code"), ONE_EDIT)
def test_check_reports_an_edit_as_the_rule_found_it(name, text, code):
    """Severity and column are the rule's own, not guessed from the applied edit."""
    data = text.format(comment="").encode()
    _, converted = convert_bytes(name, data, MLU)
    edit = converted.edits[-1]
    checked = [f for f in check_bytes(name, data, MLU).findings if f.rule == edit.rule and f.line == edit.line]
    assert len(checked) == 1
    finding = checked[0]
    assert finding.severity == MLU.by_code(edit.rule).severity
    changed_at = next(i for i, (a, b) in enumerate(zip(edit.before, edit.after)) if a != b) + 1
    assert finding.col <= changed_at and finding.message.startswith("would be rewritten: ")
    assert finding.col > 1 or changed_at == 1


def test_convert_and_check_agree_on_findings():
    """What convert reports (findings without edits) check reports too, with the same code and line."""
    data = b"import torch\nx = torch.zeros(2).cuda()\ny = torch.einsum('ii', x)\nprint(torch.version.cuda)\n"
    _, converted = convert_bytes("train.py", data, MLU)
    checked = {(f.rule, f.line) for f in check_bytes("train.py", data, MLU).findings}
    assert {(f.rule, f.line) for f in converted.findings} <= checked
    assert {(e.rule, e.line) for e in converted.edits} <= checked


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_inserted_lines_keep_the_files_line_ending_and_order(newline):
    data = newline.join(["import os", "import torch", "x = torch.zeros(2).cuda()", ""]).encode()
    _, result = convert_bytes("train.py", data, MLU)
    assert (
        result.new_bytes
        == newline.join(
            ["import os", "import torch", "import torch_mlu  # noqa: F401", "x = torch.zeros(2).mlu()", ""]
        ).encode()
    )


def test_atomic_write_keeps_the_old_file_when_the_write_fails(tmp_path, monkeypatch):
    import os

    from porter.core.files import write_atomically

    target = tmp_path / "train.py"
    target.write_bytes(b"old")
    write_atomically(target, b"new", mode=0o755)
    assert target.read_bytes() == b"new" and (target.stat().st_mode & 0o777) == 0o755

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError):
        write_atomically(target, b"newer")
    assert target.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["train.py"]  # no temporary file left behind


def test_atomic_write_never_follows_a_link_at_its_temporary_name(tmp_path):
    import os

    from porter.core.files import write_atomically

    outside = tmp_path / "outside"
    outside.write_bytes(b"keep")
    target = tmp_path / "train.py"
    (tmp_path / f".train.py.{os.getpid()}.porter-tmp").symlink_to(outside)
    with pytest.raises(OSError):
        write_atomically(target, b"new")
    assert outside.read_bytes() == b"keep"
