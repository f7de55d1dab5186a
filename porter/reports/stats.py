"""The statistics every human-readable report shows, derived from report.json alone.

report.html and report.md both call `compute_stats`, so their numbers cannot disagree
with each other or with report.json; `porter report` re-renders from the JSON for the
same reason. The figures follow hipify-clang's end-of-run statistics, adapted to porter.
"""

from __future__ import annotations

from collections import Counter

SEVERITY_ORDER = ("error", "warning", "info")
# CUDA C++ sources: porter converts Python, scripts and configs, never kernels; the summary says
# how many the tree holds, so that a conversion rate is not read as covering them.
CUDA_SOURCE_SUFFIXES = (".cu", ".cuh")
KERNEL_PORT = {
    "mlu": "a port to BANG C (built with torch_mlu.utils.cpp_extension)",
    "hip": "hipify (hipify-perl or hipify-clang), then a build with hipcc",
}
OP_TABLE_BAND = "9"  # PRT9xx: op-table findings are about torch API support, not CUDA use


def is_op_table_rule(code: str) -> bool:
    """Whether `code` is in the 9xx band (op-table support findings)."""
    return len(code) == 6 and code.startswith("PRT") and code[3] == OP_TABLE_BAND


def ratio(part: int, whole: int | None) -> float | None:
    """part / whole, or None when the whole is unknown or zero."""
    return part / whole if whole else None


def percent(value: float | None) -> str:
    """A share as both renderers print it: one decimal, or "n/a" when unknown."""
    return "n/a" if value is None else f"{100 * value:.1f}%"


def compute_stats(report: dict) -> dict:
    """Every number the summary shows, from a schema_version 1 report.

    "CUDA references found" counts edits plus findings outside the 9xx band: each is one
    place where the source uses CUDA; an edit converted it, a finding left it for a person.
    """
    s = report["summary"]
    findings = report.get("findings", [])
    rules = report.get("rules", {})
    cuda_findings = sum(1 for f in findings if not is_op_table_rule(f["rule"]))
    found = s["edits"] + cuda_findings
    lines_scanned = s.get("lines_scanned")  # absent from reports written before it existed
    by_rule_sev: dict[str, Counter[str]] = {}
    for f in findings:
        by_rule_sev.setdefault(f["rule"], Counter())[f["severity"]] += 1
    return {
        "files": {k: s[f"files_{k}"] for k in ("scanned", "changed", "unchanged", "skipped", "failed")},
        "references": {
            "found": found,
            "converted": s["edits"],
            "findings": cuda_findings,
            # No edit at all (HIP, where ROCm keeps CUDA's names on purpose): no rate, since a
            # 0% would read as a failure where keeping is the intended result.
            "rate": ratio(s["edits"], found) if s["edits"] else None,
        },
        "op_table_findings": len(findings) - cuda_findings,
        "lines": {
            "changed": s["lines_changed"],
            "scanned": lines_scanned,
            "share": ratio(s["lines_changed"], lines_scanned),
        },
        "edits": s["edits"],
        "edits_by_rule": [
            {"code": code, "name": rules.get(code, {}).get("name", ""), "count": n}
            for code, n in sorted(s["edits_by_rule"].items())
        ],
        "findings": s["findings"],
        "findings_by_severity": {k: s["findings_by_severity"].get(k, 0) for k in SEVERITY_ORDER},
        "findings_by_rule": [
            {
                "code": code,
                "name": rules.get(code, {}).get("name", ""),
                "total": sum(c.values()),
                **{k: c.get(k, 0) for k in SEVERITY_ORDER},
            }
            for code, c in sorted(by_rule_sev.items())
        ],
        "apis_by_status": dict(s["apis_by_status"]) if s.get("apis_by_status") else None,
        "cuda_sources": cuda_sources(report),
        "left_out": left_out(report),
    }


_WHY = {".gitignore": "by .gitignore", "exclude": "by exclude patterns"}
_NAMED = 5  # paths the sentence names


def left_out(report: dict) -> dict | None:
    """What the file selection left out (report.json's `left_out`, absent from reports written
    before it): the sentence both renderers print, naming the first paths and what git tracks
    among them, and how to scan them. None when nothing was left out."""
    out = report.get("left_out") or {}
    if not out.get("count"):
        return None
    count, reasons = out["count"], out.get("by_reason", {})
    why = ", ".join(f"{n} {_WHY.get(reason, reason)}" for reason, n in reasons.items())
    names = ", ".join(p["path"] for p in out.get("paths", [])[:_NAMED])
    more = count - min(count, _NAMED)
    sentence = (
        f"Left out by the file selection, neither scanned nor listed: {count} path{'s' * (count > 1)} ({why}): "
        f"{names}{f' and {more} more' if more else ''}."
    )
    tracked = out.get("tracked")
    if tracked:
        which = ("it" if count == 1 else f"all {count}") if tracked == count else f"{tracked} of them"
        sentence += (
            f" Git tracks {which}: the project's files all the same (.gitignore keeps only untracked files out of git)."
        )
    if reasons.get(".gitignore"):
        sentence += " To scan them: --no-respect-gitignore."
    return {"count": count, "tracked": out.get("tracked"), "sentence": sentence}


def cuda_sources(report: dict) -> dict | None:
    """The tree's CUDA C++ sources (.cu, .cuh), which no rule converts: how many, in which
    folders (the busiest first), and the sentence both renderers print about them."""
    paths = [f["path"] for f in report.get("files", []) if f["path"].lower().endswith(CUDA_SOURCE_SUFFIXES)]
    if not paths:
        return None
    folders = [folder for folder, _ in Counter(p.rpartition("/")[0] or "the top folder" for p in paths).most_common()]
    shown, more = folders[:3], len(folders) - 3
    where = ", ".join(shown) + (f" and {more} more folder{'s' * (more > 1)}" if more > 0 else "")
    port = KERNEL_PORT.get(report.get("target", ""), "a port of the kernels to the target")
    sentence = (
        f"CUDA C++ sources left as they are: {len(paths)} .cu/.cuh file{'s' * (len(paths) > 1)} ({where}). "
        f"porter converts Python, scripts and configs, not kernels: running these on the target takes {port}."
    )
    return {"files": len(paths), "folders": folders, "sentence": sentence}


def file_rows(report: dict) -> list[dict]:
    """One row per scanned file: status, edit count and findings by severity.

    Counts come from `findings[]` rather than the per-file `findings` number, so a row
    always matches the findings table the reader filters.
    """
    per_path: dict[str, Counter[str]] = {}
    for f in report.get("findings", []):
        per_path.setdefault(f["path"], Counter())[f["severity"]] += 1
    rows = []
    for entry in report["files"]:
        sev = per_path.get(entry["path"], Counter())
        rows.append(
            {
                "path": entry["path"],
                "kind": entry.get("kind", ""),
                "status": entry["status"],
                "reason": entry.get("reason") or "",
                "edits": len(entry.get("edits", ())),
                **{k: sev.get(k, 0) for k in SEVERITY_ORDER},
                "findings": sum(sev.values()),
            }
        )
    return rows


def needs_review(row: dict) -> bool:
    """A file a reviewer must look at: changed, not converted, or with findings."""
    return row["status"] != "unchanged" or row["findings"] > 0
