"""The tree index (porter/engine/tree_index.py): a re-run of an unchanged tree neither walks
nor reads it, and every kind of change is seen again: bytes (even with the modification
time set back), a new file, an edited .gitignore, a file changed within the racy window."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import porter.core.fileset
import porter.core.tree
import porter.engine.cache
import porter.engine.pipeline
import porter.engine.runner
import porter.engine.tree_index
from porter.checker.run import run_check
from porter.run_options import RunOptions

CUDA = "import torch\nx = torch.zeros(1).cuda()\n"


def _tree(root: Path) -> Path:
    src = root / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "train.py").write_text(CUDA)
    (src / "pkg" / "model.py").write_text('import torch\n\ndef f():\n    return torch.zeros(1).to("meta")\n')
    (src / "notes.txt").write_text("cuda everywhere\n")
    (src / ".gitignore").write_text("*.log\nzzzzz.py\n")
    return src


class Counted:
    """Counts the source files read (by the runner, or by a worker: a first run's files are
    read where they are converted) and the walks made."""

    def __init__(self, monkeypatch) -> None:
        self.reads: list[str] = []
        self.walks = 0
        real_read = porter.engine.runner.read_source
        real_entries = porter.core.fileset.TreeFilter.entries

        def read_source(root, rel, *args):
            self.reads.append(rel)
            return real_read(root, rel, *args)

        def entries(filter_, *args, **kwargs):
            self.walks += 1
            return real_entries(filter_, *args, **kwargs)

        real_bytes = porter.engine.runner.Task.bytes

        def task_bytes(task):
            if task.data is None:
                self.reads.append(task.rel)
            return real_bytes(task)

        monkeypatch.setattr(porter.engine.runner.Task, "bytes", task_bytes)
        monkeypatch.setattr(porter.engine.runner, "read_source", read_source)
        monkeypatch.setattr(porter.core.fileset.TreeFilter, "entries", entries)

    def reset(self) -> None:
        self.reads.clear()
        self.walks = 0


def _check(src: Path, cache: Path) -> dict[str, list[str]]:
    result = run_check([src], RunOptions("mlu", jobs=1, cache_dir=cache))
    return {r.path: sorted(f.rule for f in r.findings) for r in result.files}


@pytest.fixture
def trusting(monkeypatch):
    """No racy window: files written by the test a moment ago count as settled."""
    monkeypatch.setattr(porter.engine.tree_index, "RACY_NS", 0)


def test_unchanged_tree_is_neither_walked_nor_read(tmp_path, monkeypatch, trusting):
    src, cache = _tree(tmp_path), tmp_path / "cache"
    counted = Counted(monkeypatch)
    first = _check(src, cache)
    assert counted.walks == 1 and "train.py" in counted.reads
    counted.reset()
    assert _check(src, cache) == first
    assert counted.walks == 0 and counted.reads == []


def test_changed_bytes_are_read_even_with_the_old_modification_time(tmp_path, monkeypatch, trusting):
    src, cache = _tree(tmp_path), tmp_path / "cache"
    first = _check(src, cache)
    assert first["pkg/model.py"] == []
    counted = Counted(monkeypatch)
    path = src / "pkg" / "model.py"
    st = path.stat()
    path.write_text(path.read_text().replace('"meta"', '"cuda"'))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # as `cp -p` or `touch -r` would leave it
    assert porter.core.tree.signature(str(path))[:2] == [st.st_size, st.st_mtime_ns]  # only ctime tells
    again = _check(src, cache)
    assert counted.reads == ["pkg/model.py"]  # the change time moved: read again, nothing else
    assert again["pkg/model.py"] != []


def test_new_file_and_edited_gitignore_are_seen(tmp_path, monkeypatch, trusting):
    src, cache = _tree(tmp_path), tmp_path / "cache"
    _check(src, cache)
    (src / "pkg" / "extra.py").write_text(CUDA)
    assert "pkg/extra.py" in _check(src, cache)
    gitignore = src / ".gitignore"
    st = gitignore.stat()
    gitignore.write_text("*.log\nextra.py\n")  # edited in place: its folder's times do not move
    os.utime(gitignore, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert porter.core.tree.signature(str(gitignore))[:2] == [st.st_size, st.st_mtime_ns]
    assert "pkg/extra.py" not in _check(src, cache)


def test_a_gitignore_added_to_a_folder_is_seen(tmp_path, monkeypatch, trusting):
    """A folder listed without a .gitignore records no entry for it: the folder's own
    signature (its change time cannot be set back) is what says one was added."""
    src, cache = _tree(tmp_path), tmp_path / "cache"
    assert "pkg/model.py" in _check(src, cache)
    folder = os.stat(src / "pkg")
    (src / "pkg" / ".gitignore").write_text("model.py\n")
    os.utime(src / "pkg", ns=(folder.st_atime_ns, folder.st_mtime_ns))  # as `rsync -t` leaves it
    assert "pkg/model.py" not in _check(src, cache)


def test_a_file_changed_within_the_racy_window_is_read_again(tmp_path, monkeypatch):
    src, cache = _tree(tmp_path), tmp_path / "cache"
    _check(src, cache)  # the index is written moments after the files: none is trusted yet
    counted = Counted(monkeypatch)
    _check(src, cache)
    assert "train.py" in counted.reads and counted.walks == 1


def test_no_cache_keeps_no_index(tmp_path, monkeypatch):
    src = _tree(tmp_path)
    counted = Counted(monkeypatch)
    for _ in range(2):
        run_check([src], RunOptions("mlu", jobs=1, cache_dir=None))
    assert counted.walks == 2 and counted.reads.count("train.py") == 2


def test_a_file_changed_between_the_walk_and_its_read_is_not_stored(tmp_path, monkeypatch, trusting):
    """The index vouched for a file unread; the worker that reads it after all (the result
    cache had no answer) finds other bytes: it fails the file rather than store a result
    under the key of bytes it never saw."""
    from porter.engine.runner import Task, _result
    from porter.rules import ActiveRules, Selection, load_rules

    monkeypatch.setattr(porter.engine.runner, "_RULES", [ActiveRules(load_rules("mlu"), Selection())])
    src = _tree(tmp_path)
    data = (src / "train.py").read_bytes()
    task = Task(str(src), "train.py", None, "python", porter.engine.cache.content_digest(data), len(data))
    assert _result("check", task).skipped is None
    (src / "train.py").write_text(CUDA.replace("zeros", "ones"))
    assert "changed while porter ran" in _result("check", task).skipped


def test_converts_into_new_folders_and_checks_share_one_listing(tmp_path, monkeypatch, trusting):
    """A convert writes a new OUT each time (outside SRC: it does not change the walk), and a
    check between them asks for the same files: one walk serves them all."""
    from porter.converter.run import run_convert

    src, cache = _tree(tmp_path), tmp_path / "cache"
    counted = Counted(monkeypatch)
    for name in ("out1", "out2", "out3"):
        run_convert(src, RunOptions(target="mlu", out=tmp_path / name, jobs=1, cache_dir=cache))
        _check(src, cache)
    assert counted.walks == 1
    assert (tmp_path / "out3" / "train.py").read_text() != CUDA  # converted all the same


def test_each_selection_keeps_its_own_listing(tmp_path, monkeypatch, trusting):
    """Runs with different file selections (an --exclude) alternate without walking again."""
    from porter.config import Settings

    src, cache = _tree(tmp_path), tmp_path / "cache"
    counted = Counted(monkeypatch)
    for _ in range(3):
        plain = run_check([src], RunOptions("mlu", jobs=1, cache_dir=cache))
        narrowed = run_check([src], RunOptions("mlu", settings=Settings(exclude=("pkg/",)), jobs=1, cache_dir=cache))
    assert counted.walks == 2
    assert {r.path for r in plain.files} - {r.path for r in narrowed.files} == {"pkg/model.py"}


def test_a_first_run_reads_each_file_where_it_is_checked(tmp_path, monkeypatch, trusting):
    """With nothing to look up (no index, no stored results), the runner does not read the
    files the pipelines handle: each worker reads its own, and says its digest, which the
    index and the cache keep. With stored results but no index (a cache restored for a new
    checkout), the runner reads every file first, to find them."""
    src, cache = _tree(tmp_path), tmp_path / "cache"
    parent: list[str] = []
    real_read = porter.engine.runner.read_source
    monkeypatch.setattr(
        porter.engine.runner, "read_source", lambda root, rel, *args: parent.append(rel) or real_read(root, rel, *args)
    )
    first = _check(src, cache)
    assert "train.py" not in parent and "pkg/model.py" not in parent
    for index in (cache / "trees").iterdir():
        index.unlink()
    parent.clear()
    computed: list[str] = []
    real_check = porter.engine.pipeline.check_file
    monkeypatch.setattr(
        porter.engine.pipeline, "check_file", lambda rel, *args: computed.append(rel) or real_check(rel, *args)
    )
    assert _check(src, cache) == first
    assert {"train.py", "pkg/model.py"} <= set(parent) and computed == []  # every answer from the cache
