"""The per-file result cache: same results warm as cold; corrupt entries never trusted."""

from __future__ import annotations

from pathlib import Path

import pytest

import porter.engine.cache
from porter.engine.cache import ResultCache
from porter.core.model import FileResult
from porter.converter.run import run_convert
from porter.run_options import RunOptions

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "fixtures" / "repos" / "minitrain"


def _run(tmp_path: Path, name: str, cache: Path | None):
    done = run_convert(SRC, RunOptions(target="mlu", out=tmp_path / name, jobs=1, cache_dir=cache))
    report, out = done.report, done.out
    files = {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in out.rglob("*")
        if p.is_file() and "porter_report" not in p.parts
    }
    return report, files


def test_warm_run_equals_cold_run(tmp_path):
    cache = tmp_path / "cache"
    cold_report, cold_files = _run(tmp_path, "cold", cache)
    assert any(cache.rglob("*.json")), "nothing was cached"
    warm_report, warm_files = _run(tmp_path, "warm", cache)
    assert warm_files == cold_files
    assert warm_report["summary"] == cold_report["summary"]
    assert warm_report["findings"] == cold_report["findings"]


def test_corrupt_entries_are_ignored(tmp_path):
    cache = tmp_path / "cache"
    reference, files = _run(tmp_path, "ref", None)
    _run(tmp_path, "fill", cache)
    entries = sorted(cache.rglob("*.json"))
    entries[0].write_text("{not json")
    entries[1].write_text(entries[1].read_text().replace("mlu", "xpu"))  # payload no longer matches its checksum
    if len(entries) > 2:
        entries[2].write_bytes(b"")
    report, again = _run(tmp_path, "again", cache)
    assert again == files
    assert report["summary"] == reference["summary"]


def test_unwritable_cache_only_costs_time(tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory should be")
    report, _ = _run(tmp_path, "out", blocker)
    assert report["summary"]["files_changed"] > 0


def test_entry_from_another_key_is_rejected(tmp_path):
    cache = ResultCache(tmp_path)

    cache.put("a" * 64, FileResult("x.py", "unchanged"))
    path = tmp_path / "aa" / ("a" * 64 + ".json")
    (tmp_path / "bb").mkdir()
    (tmp_path / "bb" / ("b" * 64 + ".json")).write_bytes(path.read_bytes())
    assert cache.get("b" * 64) is None
    assert cache.get("a" * 64) is not None


def _packs(cache: Path) -> list[Path]:
    return sorted((cache / "packs").rglob("*.json"))


def test_unchanged_rerun_reads_one_pack_and_writes_none(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cold_report, cold_files = _run(tmp_path, "cold", cache)
    assert len(_packs(cache)) == 1

    def no_work(work, tasks, *args):
        assert not tasks, "a re-run of an unchanged tree computed results"
        return []

    monkeypatch.setattr("porter.engine.cache.map_files", no_work)
    reads: list[Path] = []
    real_read = porter.engine.cache.read_entry
    monkeypatch.setattr(porter.engine.cache, "read_entry", lambda path, key: reads.append(path) or real_read(path, key))
    warm_report, warm_files = _run(tmp_path, "warm", cache)
    assert warm_files == cold_files and warm_report == {**cold_report, "output": warm_report["output"]}
    assert [p for p in reads if "packs" in p.parts] == _packs(cache)  # the one pack, and nothing written
    assert len(reads) == 4  # the pack, the two rendered report pages, the LoRA entry point


def test_corrupt_pack_is_recomputed_never_trusted(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    _, files = _run(tmp_path, "fill", cache)
    (pack,) = _packs(cache)
    pack.write_text(pack.read_text().replace("changed", "unchanged"))  # no longer verifies
    _, again = _run(tmp_path, "again", cache)
    assert again == files
    for pack in _packs(cache):  # the run stored its results afresh, in a pack that verifies
        porter.engine.cache.read_entry(pack, pack.stem.split("-")[0])


def test_old_packs_are_dropped(tmp_path):
    cache = ResultCache(tmp_path)
    for i in range(ResultCache.PACKS_KEPT + 3):
        cache.put_many("ctx", {f"k{i}": FileResult(f"f{i}.py", "unchanged")})
    assert len(_packs(tmp_path)) == ResultCache.PACKS_KEPT
    found = cache.get_many("ctx", ["k0", f"k{ResultCache.PACKS_KEPT + 2}"])
    assert found[0] is None and found[1] == FileResult(f"f{ResultCache.PACKS_KEPT + 2}.py", "unchanged")
    assert cache.get_many("other context", [f"k{ResultCache.PACKS_KEPT + 2}"]) == [None]


def test_one_changed_file_is_the_only_one_computed(tmp_path, monkeypatch):
    import shutil

    src = tmp_path / "src"
    shutil.copytree(SRC, src)
    cache = tmp_path / "cache"
    run_convert(src, RunOptions(target="mlu", out=tmp_path / "first", jobs=1, cache_dir=cache))
    changed = src / "src" / "minitrain" / "trainer.py"
    changed.write_text(changed.read_text() + "\nx = torch.cuda.device_count()\n")
    computed: list[int] = []
    real = porter.engine.cache.map_files
    monkeypatch.setattr(
        porter.engine.cache, "map_files", lambda work, tasks, *a: computed.append(len(tasks)) or real(work, tasks, *a)
    )
    out = run_convert(src, RunOptions(target="mlu", out=tmp_path / "second", jobs=1, cache_dir=cache)).out
    assert computed == [1]
    assert "torch.mlu.device_count()" in (out / "src" / "minitrain" / "trainer.py").read_text()


def test_reports_of_an_unchanged_rerun_are_not_rendered_again(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    _run(tmp_path, "cold", cache)
    monkeypatch.setattr("porter.reports.html.render_html", lambda *a: pytest.fail("report.html rendered again"))
    monkeypatch.setattr("porter.reports.markdown.render_markdown", lambda *a: pytest.fail("report.md rendered again"))
    _run(tmp_path, "warm", cache)
    cold, warm = tmp_path / "cold" / "porter_report", tmp_path / "warm" / "porter_report"
    for name in ("changes.patch", "report.md", "report.html"):  # OUT differs; the pages never show it
        assert (warm / name).read_bytes() == (cold / name).read_bytes()


def test_two_runs_sharing_a_cache_at_once(tmp_path):
    """Two processes converting with one cache directory at the same moment: each writes
    its own pack atomically, both outputs equal a run without cache, and the packs verify."""
    import subprocess
    import sys

    def start(name: str, *extra: str) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "porter", "convert", str(SRC), "-t", "mlu", "-o", str(tmp_path / name), *extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    cache = tmp_path / "cache"
    runs = [start("a", "--cache-dir", str(cache)), start("b", "--cache-dir", str(cache))]
    assert [p.wait() for p in runs] == [0, 0]
    assert start("plain", "--no-cache").wait() == 0

    def files(name: str) -> dict[str, bytes]:
        out = tmp_path / name
        return {
            p.relative_to(out).as_posix(): p.read_bytes()
            for p in out.rglob("*")
            if p.is_file() and "porter_report" not in p.parts
        }

    assert files("a") == files("b") == files("plain")
    for pack in _packs(cache):
        porter.engine.cache.read_entry(pack, pack.stem.split("-")[0])
    assert start("again", "--cache-dir", str(cache)).wait() == 0 and files("again") == files("plain")


def test_a_changed_api_table_invalidates_results(tmp_path, monkeypatch):
    """The op scan's answers come from the tables: editing one (or rebuilding it with
    tools/build_op_tables.py) must not leave results of the old table in the cache."""
    import porter.engine.cache as cache

    tables = tmp_path / "op_tables"
    tables.mkdir()
    (tables / "torch_api_2.4.json").write_text('{"entries": {}}')
    monkeypatch.setattr(cache, "data_dir", lambda name: tables)
    cache.code_fingerprint.cache_clear()
    before = cache.code_fingerprint()
    (tables / "torch_api_2.4.json").write_text('{"entries": {"torch.x": {"status": "unsupported"}}}')
    cache.code_fingerprint.cache_clear()
    try:
        assert cache.code_fingerprint() != before
    finally:
        cache.code_fingerprint.cache_clear()


def test_a_key_follows_porters_code_within_a_process(monkeypatch):
    """Keys of a run share one prefix hash (version, code, context), made once: another code
    fingerprint must still give another key."""
    import porter.engine.cache as cache

    key = cache.cache_key("digest", "a.py", "context")
    monkeypatch.setattr(cache, "code_fingerprint", lambda: "other code")
    assert cache.cache_key("digest", "a.py", "context") != key
