"""changes.patch from porter's own edit spans (porter/core/edit_spans.py): the same bytes as
the whole-file matcher gave wherever a change is not ambiguous, no matcher over the file, and
`git apply` accepts what it writes where the two differ."""

from __future__ import annotations

import shutil
import subprocess

import pytest

import porter
from porter.core import patch as patch_module
from porter.core.edit_spans import ByteLines, edit_line_spans, span_opcodes
from porter.core.patch import file_diff

from fixture_cases import discover
from test_rule_fixtures import _convert

CHANGED = [case for case in discover() if case.must_fire]


def _matcher_diff(rel: str, old: bytes, new: bytes) -> bytes:
    return file_diff(rel, old, new)  # without spans: the anchored matcher over the whole file


def test_every_fixture_gets_the_patch_the_matcher_gave():
    compared = 0
    for case in CHANGED:
        data = case.path.read_bytes()
        result = _convert(case, data)
        if result.new_bytes is None:
            continue
        spans = [e.span for e in result.edits]
        assert None not in spans, case.id
        assert span_opcodes(ByteLines(data), ByteLines(result.new_bytes), spans) is not None, case.id
        assert file_diff(case.path.name, data, result.new_bytes, spans=spans) == _matcher_diff(
            case.path.name, data, result.new_bytes
        ), case.id
        compared += 1
    assert compared > 100


def _no_matcher(monkeypatch):
    def refuse(self):
        raise AssertionError("the whole-file matcher ran")

    monkeypatch.setattr(patch_module._AnchoredMatcher, "get_opcodes", refuse)


def _applies(src, patch: bytes, out, tmp_path) -> None:
    """`git apply` takes the patch on a copy of SRC and yields OUT's files."""
    copy = tmp_path / "applied"
    shutil.copytree(src, copy)
    (tmp_path / "p.patch").write_bytes(patch)
    subprocess.run(["git", "apply", "--unsafe-paths", str(tmp_path / "p.patch")], cwd=copy, check=True)
    for path in src.iterdir():
        assert (copy / path.name).read_bytes() == (out / path.name).read_bytes(), path.name


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_one_edit_among_equal_lines_is_found_without_a_matcher(tmp_path, monkeypatch):
    # 15,000 equal lines (no line occurs once, nothing to anchor a matcher on): the matcher
    # alone took 16 s on 150 KB; the edit's span says where the change is.
    src = tmp_path / "src"
    src.mkdir()
    lines = ["# a cuda note\n"] * 15_000
    lines[7_000] = "x = torch.ones(1).cuda()\n"
    (src / "same.py").write_text("import torch\n" + "".join(lines))
    _no_matcher(monkeypatch)
    done = porter.convert(src, "mlu", out=tmp_path / "out", jobs=1, config=False)
    patch = (tmp_path / "out" / "porter_report" / "changes.patch").read_bytes()
    assert done.edits == 2
    assert patch.count(b"\n@@ ") == 2
    assert b"-x = torch.ones(1).cuda()\n+x = torch.ones(1).mlu()\n" in patch
    _applies(src, patch, tmp_path / "out", tmp_path)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_change_that_repeats_its_neighbour_is_shown_where_it_was_made(tmp_path):
    # The edit makes line 3 equal to line 4. The matcher aligned the old line 4 with the new
    # line 3 and showed a delete and an insert around it; the span shows the line changed.
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text('import torch\n\ndevice = torch.device("cuda")\ndevice = torch.device("mlu")\n')
    porter.convert(src, "mlu", out=tmp_path / "out", jobs=1, config=False)
    patch = (tmp_path / "out" / "porter_report" / "changes.patch").read_bytes()
    assert b'-device = torch.device("cuda")\n+device = torch.device("mlu")\n device = torch.device("mlu")\n' in patch
    _applies(src, patch, tmp_path / "out", tmp_path)


@pytest.mark.parametrize(
    "text, edits",
    [
        ("a\nb\nc\n", [(2, 3, "B")]),  # one line
        ("a\nb\nc\n", [(1, 2, "\nx\n")]),  # a newline becomes three
        ("a\nb\nc\n", [(0, 4, "")]),  # two lines go
        ("a\nb\nc\n", [(6, 6, "d\n")]),  # after the last line
        ("a\nb\nc", [(5, 5, "\n")]),  # a newline at the end, where there was none
        ("a\nb\nc\n", [(5, 6, "")]),  # the last newline goes
        ("a\r\nb\r\n", [(0, 1, "x\r\ny")]),  # CRLF lines keep their \r
        ("a\nb\nc\nd\n", [(0, 1, "x"), (0, 1, "x"), (2, 3, "y\nz")]),  # two edits, one region
        ("", [(0, 0, "a\n")]),  # an empty file
    ],
)
def test_spans_account_for_every_change(text, edits):
    applied = sorted(set(edits))
    new = text
    for start, end, replacement in reversed(applied):
        new = new[:start] + replacement + new[end:]
    spans = edit_line_spans(text, applied)
    old_b, new_b = text.encode(), new.encode()
    assert span_opcodes(ByteLines(old_b), ByteLines(new_b), spans) is not None
    assert file_diff("f", old_b, new_b, spans=spans) == _matcher_diff("f", old_b, new_b)


def test_spans_that_do_not_fit_fall_back_to_the_matcher():
    old, new = b"a\nb\nc\n", b"a\nB\nc\n"
    wrong = [(0, 1, 0, 1)]  # says line 1 changed, but line 2 did
    assert span_opcodes(ByteLines(old), ByteLines(new), wrong) is None
    assert file_diff("f", old, new, spans=wrong) == _matcher_diff("f", old, new)


def test_the_span_stays_out_of_the_report_and_the_cache():
    from porter.core.model import EditRecord, plain

    record = EditRecord("PRT101", 1, "a", "b", (0, 1, 0, 1))
    assert plain(record) == {"rule": "PRT101", "line": 1, "before": "a", "after": "b"}
