"""The per-file result cache: same results warm as cold; corrupt entries never trusted."""

from __future__ import annotations

from pathlib import Path

from porter.cache import ResultCache
from porter.convert import ConvertOptions, convert

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "fixtures" / "repos" / "minitrain"


def _run(tmp_path: Path, name: str, cache: Path | None):
    _, report, out = convert(SRC, ConvertOptions(target="mlu", out=tmp_path / name, jobs=1, cache_dir=cache))
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file() and "porter_report" not in p.parts}
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
    from porter.model import FileResult

    cache.put("a" * 64, FileResult("x.py", "unchanged"))
    path = tmp_path / "aa" / ("a" * 64 + ".json")
    (tmp_path / "bb").mkdir()
    (tmp_path / "bb" / ("b" * 64 + ".json")).write_bytes(path.read_bytes())
    assert cache.get("b" * 64) is None
    assert cache.get("a" * 64) is not None
