"""Issue 30: writes outside OUT. Each case plants what would lead porter to write elsewhere
(a link where OUT or a report folder goes, a poisoned cache entry) and checks that nothing
outside OUT (or SRC with --in-place) changed, with one line naming the path and exit 2.
The check is one helper of porter/core/files.py (plain_rel, inside, refuse_linked_folder)
that every writer asks."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from test_faults import CUDA, _one_line_error, _porter, _repo, _snapshot


def test_link_planted_where_the_default_out_goes_is_refused(tmp_path):
    src, elsewhere = _repo(tmp_path), tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "repo_mlu").symlink_to(elsewhere, target_is_directory=True)
    for extra in ((), ("--force",)):  # --force never makes porter follow it
        code, _, err = _porter("convert", str(src), "--target", "mlu", *extra)
        line = _one_line_error(err)
        assert code == 2 and str(tmp_path / "repo_mlu") in line and "symbolic link" in line
        assert not list(elsewhere.iterdir())


def test_link_planted_where_the_in_place_report_goes_is_refused(tmp_path):
    src, elsewhere = _repo(tmp_path), tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "repo_porter_report").symlink_to(elsewhere, target_is_directory=True)
    before = _snapshot(src)
    code, _, err = _porter("convert", str(src), "--target", "mlu", "--in-place")
    line = _one_line_error(err)
    assert code == 2 and str(tmp_path / "repo_porter_report") in line and "symbolic link" in line
    assert not list(elsewhere.iterdir())
    assert _snapshot(src) == before  # refused before SRC is rewritten


def _poison_tree_index(cache: Path, rel: str) -> None:
    """Add `rel` to every listing of the tree index, as a tampered cache would, keeping the
    entry's checksum valid and the index trusted (its listings' folders unchanged)."""
    from porter.core.tree import signature

    (path,) = (cache / "trees").glob("*.json")
    header, _, payload = path.read_bytes().partition(b"\n")
    meta, data = json.loads(header), json.loads(payload)
    for listing in data["listings"].values():
        listing["dirs"] = {
            d: signature(d_path)
            for d, d_path in (
                (d, os.path.join(str(cache.parent / "repo"), d) if d else str(cache.parent / "repo"))
                for d in listing["dirs"]
            )
        }
        listing["entries"].append([rel, False, None, None])
    payload = json.dumps(data).encode()
    meta["sha256"] = hashlib.sha256(payload).hexdigest()
    path.write_bytes(json.dumps(meta).encode() + b"\n" + payload)
    later = time.time() + 60  # written "later" than every file: all of them are trusted
    os.utime(path, (later, later))


def test_tree_index_entry_leading_out_of_src_is_not_rewritten_in_place(tmp_path):
    src, cache = _repo(tmp_path), tmp_path / "cache"
    (tmp_path / "escape.py").write_text(CUDA)
    code, _, err = _porter("convert", str(src), "--target", "mlu", "--in-place", "--cache-dir", str(cache))
    assert code == 0, err
    _poison_tree_index(cache, "../escape.py")
    code, _, err = _porter("convert", str(src), "--target", "mlu", "--in-place", "--cache-dir", str(cache))
    assert code == 0, err
    assert (tmp_path / "escape.py").read_text() == CUDA


def test_tree_index_listing_with_a_path_out_of_the_tree_is_walked_again(tmp_path):
    from porter.core.fileset import FileSelection
    from porter.engine.tree_index import TreeIndex

    src, cache = _repo(tmp_path), tmp_path / "cache"
    (src / "linked").symlink_to(tmp_path, target_is_directory=True)  # a real walk never goes through it
    index = TreeIndex(cache, src)
    chosen = FileSelection().matcher(src)
    index.listing(chosen, None)
    for bad in ("../escape.py", "/etc/passwd", "pkg/../../x.py", "", "pkg//a.py", "linked/repo/pkg/a.py"):
        for listing in index.listings.values():
            listing["entries"].append([bad, False, None, None])
        index.trusted_before = time.time_ns() + 60 * 10**9
        rels = [e.rel for e in index.listing(FileSelection().matcher(src), None)]
        assert sorted(rels) == ["linked", "pkg/a.py", "plain.txt"], bad


@pytest.mark.parametrize("rel", ["../escape.py", "/abs.py", "a/../../b.py", "a/./b.py", ""])
def test_in_place_writer_refuses_a_path_out_of_the_tree(tmp_path, rel):
    from porter.core.model import FileResult
    from porter.engine.output import write_in_place
    from porter.engine.runner import RunResult

    src = _repo(tmp_path)
    run = RunResult.__new__(RunResult)
    run.src, run.results = src, [FileResult(rel, "changed", new_bytes=b"evil")]
    before = _snapshot(tmp_path)
    assert rel in write_in_place(run)
    assert _snapshot(tmp_path) == before


def test_in_place_writer_refuses_a_folder_link_leading_out_of_the_tree(tmp_path):
    from porter.core.model import FileResult
    from porter.engine.output import write_in_place
    from porter.engine.runner import RunResult

    src, elsewhere = _repo(tmp_path), tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.py").write_text(CUDA)
    (src / "linked").symlink_to(elsewhere, target_is_directory=True)
    run = RunResult.__new__(RunResult)
    run.src, run.results = src, [FileResult("linked/x.py", "changed", new_bytes=b"evil")]
    assert "linked/x.py" in write_in_place(run)
    assert (elsewhere / "x.py").read_text() == CUDA


def test_inside_and_plain_rel():
    from porter.core.files import inside, plain_rel

    for good in ("a.py", "pkg/a.py", ".hidden/x", "..x/y", "a..b"):
        assert plain_rel(good), good
    for bad in ("", "/a", "../a", "a/..", "a//b", "./a", "a/./b", "a\0b"):
        assert not plain_rel(bad), bad
    assert inside("/", "etc/x") and not inside("/tmp", "../etc/x")


def test_verify_json_is_never_written_through_a_linked_porter_report(tmp_path):
    from porter.core.files import LinkRefused
    from porter.verify.report import write_report
    from porter.verify.run import VerifyResult

    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "porter_report").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(LinkRefused) as caught:
        write_report(VerifyResult(out, "mlu", None))
    assert caught.value.filename == str(out / "porter_report")
    assert not list(elsewhere.iterdir())
    (out / "porter_report").unlink()
    assert write_report(VerifyResult(out, "mlu", None)) == out / "porter_report" / "verify.json"
    assert json.loads((out / "porter_report" / "verify.json").read_text())["target"] == "mlu"


# --- convert --force: a rerun's OUT is what a fresh run makes, where porter can prove it ----


def test_force_rerun_removes_what_porters_earlier_run_wrote_and_src_no_longer_has(tmp_path):
    src, out = _repo(tmp_path), tmp_path / "out"
    (src / "old").mkdir()
    (src / "old" / "gone.py").write_text(CUDA)
    (src / "kept").mkdir()
    (src / "kept" / "gone.txt").write_text("x\n")
    (src / "ignored.log").write_text("log\n")
    (src / ".gitignore").write_text("*.log\n")
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out))
    assert code == 0, err
    (src / "old" / "gone.py").unlink()
    (src / "old").rmdir()
    (src / "kept" / "gone.txt").unlink()
    (src / "ignored.log").unlink()
    (out / "kept" / "mine.txt").write_text("the user's\n")  # beside a file porter wrote
    (out / "notes.md").write_text("the user's\n")
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out), "--force")
    assert code == 0, err
    assert "removed 3 file(s) porter's earlier run wrote" in err
    assert not (out / "old").exists()  # emptied by the removal: gone too, as in a fresh run
    assert not (out / "kept" / "gone.txt").exists() and not (out / "ignored.log").exists()
    assert (out / "kept" / "mine.txt").read_text() == "the user's\n"
    assert (out / "notes.md").read_text() == "the user's\n"
    assert "2 file(s)" in err and "kept as they are: kept/mine.txt, notes.md" in err
    fresh = tmp_path / "fresh"
    assert _porter("convert", str(src), "--target", "mlu", "-o", str(fresh))[0] == 0
    ours = {k[len(str(out)) :]: v for k, v in _snapshot(out).items() if "porter_" not in k}
    theirs = {k[len(str(fresh)) :]: v for k, v in _snapshot(fresh).items() if "porter_" not in k}
    assert {k: v for k, v in ours.items() if k not in ("/kept", "/kept/mine.txt", "/notes.md")} == theirs


def test_force_never_removes_what_an_earlier_report_names_outside_out(tmp_path):
    """The earlier report is untrusted input: a path of it that leads out of OUT, or through
    a link in OUT, is never removed."""
    src, out, elsewhere = _repo(tmp_path), tmp_path / "out", tmp_path / "elsewhere"
    assert _porter("convert", str(src), "--target", "mlu", "-o", str(out))[0] == 0
    elsewhere.mkdir()
    (elsewhere / "x.py").write_text("theirs\n")
    (tmp_path / "outside.py").write_text("theirs\n")
    (out / "linked").symlink_to(elsewhere, target_is_directory=True)
    report = json.loads((out / "porter_report" / "report.json").read_text())
    report["files"] += [
        {"path": p, "kind": "python", "status": "unchanged"}
        for p in ("../outside.py", "linked/x.py", "/etc/hostname", "pkg")
    ]
    (out / "porter_report" / "report.json").write_text(json.dumps(report))
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out), "--force")
    assert code == 0, err
    assert (tmp_path / "outside.py").read_text() == "theirs\n" and (elsewhere / "x.py").read_text() == "theirs\n"
    assert (out / "pkg" / "a.py").is_file() and "removed" not in err


def test_force_rerun_into_a_verified_out_still_knows_porters_files(tmp_path):
    """`porter verify OUT` adds verify.json to porter_report: the folder stays porter's, and
    the earlier run's files are still proven porter's."""
    from porter.verify.report import write_report
    from porter.verify.run import VerifyResult

    src, out = _repo(tmp_path), tmp_path / "out"
    assert _porter("convert", str(src), "--target", "mlu", "-o", str(out))[0] == 0
    write_report(VerifyResult(out, "mlu", None))
    (src / "plain.txt").unlink()
    code, _, err = _porter("convert", str(src), "--target", "mlu", "-o", str(out), "--force")
    assert code == 0, err
    assert not (out / "plain.txt").exists() and "removed 1 file(s)" in err and "warning" not in err
    # verify.json described the earlier tree: gone with it, until porter verify runs again.
    assert not (out / "porter_report" / "verify.json").exists()


@pytest.mark.parametrize("how", ["--force", "--in-place"])
def test_a_rerun_keeps_a_train_lora_py_edited_by_hand(tmp_path, how):
    """The LoRA entry point is the user's to edit: a rerun of convert keeps an edited one (and
    says so, with the command that replaces it) and rewrites the files left as porter wrote them."""
    src, out = _repo(tmp_path), tmp_path / "out"
    args = ["convert", str(src), "--target", "mlu", *(["--in-place"] if how == "--in-place" else ["-o", str(out)])]
    assert _porter(*args)[0] == 0
    lora = (tmp_path / f"{src.name}_porter_report" if how == "--in-place" else out) / "porter_lora"
    script, readme = lora / "train_lora.py", lora / "README.md"
    edited = script.read_text(encoding="utf-8") + "# my change\n"
    script.write_text(edited, encoding="utf-8")
    readme_text = readme.read_text(encoding="utf-8")
    readme.unlink()
    code, _, err = _porter(*args, *(["--force"] if how == "--force" else []))
    assert code == 0, err
    assert script.read_text(encoding="utf-8") == edited
    assert readme.read_text(encoding="utf-8") == readme_text  # porter's own file, written again
    assert f"kept {script}" in err and "--force` replaces it" in err
