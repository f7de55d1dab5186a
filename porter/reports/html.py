"""report.html: one self-contained page (no network) for reviewing a port.

Rendered server-side by jinja2 with autoescape on, so every piece of the user's source,
paths and messages reaches the page as text. The page's own CSS and JS are inlined and
allowed by hash in a Content-Security-Policy, so even a missed escape could not run a script.
Per-file diffs come from changes.patch when it sits beside report.json (the exact bytes a
reviewer will apply), else they are rebuilt from the edits' before/after lines.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import jinja2

from porter.templating import environment
from markupsafe import Markup

from porter.reports.stats import SEVERITY_ORDER, compute_stats, file_rows, needs_review, percent

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


@dataclass(frozen=True)
class DiffLine:
    kind: str  # " ", "-" or "+"
    old: int | None
    new: int | None
    text: str
    rules: tuple[str, ...] = ()


@dataclass(frozen=True)
class Hunk:
    header: str
    rules: tuple[str, ...]
    lines: tuple[DiffLine, ...]


def _decode(hunks: list[tuple[str, int, int, list]]) -> list[tuple[str, int, int, list]]:
    # The patch keeps each file's own encoding: a coding cookie in its first two lines names
    # it (PEP 263); without one, or if the bytes disagree, UTF-8 with replacement characters.
    raw = [line for *_, lines in hunks for line in lines]
    encoding = "utf-8"
    for _, old, _, data in raw:
        if old is not None and old <= 2 and (m := _COOKIE.match(data)):
            encoding = m[1].decode("ascii")
    try:
        for *_, data in raw:
            data.decode(encoding)
    except (LookupError, UnicodeDecodeError):
        encoding = "utf-8"
    return [(header, start, n, [(k, o, nw, d.decode(encoding, errors="replace").rstrip("\r")) for k, o, nw, d in lines])
            for header, start, n, lines in hunks]


def parse_patch(patch: bytes) -> dict[str, list[tuple[str, int, int, list]]]:
    """Split a unified diff into {path: [(header, old_start, old_len, lines)]}.

    Hunk bodies are consumed by their line counts, so a source line that happens to start
    with "+++ " or "diff --git" is never mistaken for a file header.
    """
    out: dict[str, list] = {}
    lines = patch.split(b"\n")
    i, path = 0, None
    while i < len(lines):
        line, i = lines[i], i + 1
        if line.startswith(b"+++ b/"):
            path = line[6:].decode("utf-8", errors="replace")
            out.setdefault(path, [])
        elif (m := _HUNK.match(line)) and path is not None:
            old, new = int(m[1]), int(m[3])
            old_left = int(m[2]) if m[2] is not None else 1
            new_left = int(m[4]) if m[4] is not None else 1
            header, old_len, raw = line.decode("ascii", errors="replace"), old_left, []
            while (old_left > 0 or new_left > 0) and i < len(lines):
                body, i = lines[i], i + 1
                kind = body[:1].decode("ascii", errors="replace")
                if kind == "\\":  # "\ No newline at end of file"
                    continue
                raw.append((kind, old if kind != "+" else None, new if kind != "-" else None, body[1:]))
                old, old_left = (old + 1, old_left - 1) if kind != "+" else (old, old_left)
                new, new_left = (new + 1, new_left - 1) if kind != "-" else (new, new_left)
            out[path].append((header, int(m[1]), old_len, raw))
    return {p: _decode(hunks) for p, hunks in out.items()}


def _nearest(spans: list[tuple[int, int]], line: int) -> int:
    # The hunk whose old range holds `line`, else the closest one: every edit gets a hunk.
    return min(range(len(spans)), key=lambda k: 0 if spans[k][0] <= line <= spans[k][1]
               else min(abs(line - spans[k][0]), abs(line - spans[k][1])))


def hunks_from_patch(parsed: list[tuple[str, int, int, list]], edits: list[dict]) -> list[Hunk]:
    """Annotate each hunk, and each old line, with the rule codes of the edits on it."""
    spans = [(start, start + max(n, 1) - 1) for _, start, n, _ in parsed]
    codes: list[set[str]] = [set() for _ in parsed]
    for e in edits:
        if parsed:
            codes[_nearest(spans, e["line"])].add(e["rule"])
    by_line: dict[int, set[str]] = {}
    for e in edits:
        by_line.setdefault(e["line"], set()).add(e["rule"])
    return [Hunk(header, tuple(sorted(codes[k])), tuple(
        DiffLine(kind, old, new, text, tuple(sorted(by_line.get(old, ()))) if kind != "+" else ())
        for kind, old, new, text in lines)) for k, (header, _, _, lines) in enumerate(parsed)]


def hunks_from_edits(edits: list[dict]) -> list[Hunk]:
    """A diff rebuilt from report.json alone: one hunk per edited line.

    Several edits on one line each record the whole line after their own change only, so
    each after-line is shown under its own rule rather than merged by guesswork.
    """
    grouped: dict[int, list[dict]] = {}
    for e in edits:
        grouped.setdefault(e["line"], []).append(e)
    hunks = []
    for line, group in sorted(grouped.items()):
        rules = tuple(sorted({e["rule"] for e in group}))
        body = [DiffLine("-", line, None, group[0]["before"], rules)]
        body += [DiffLine("+", None, None, text, (e["rule"],)) for e in group for text in e["after"].splitlines() or [""]]
        hunks.append(Hunk(f"@@ line {line} @@", rules, tuple(body)))
    return hunks


def _diffs(report: dict, patch: bytes | None) -> list[dict]:
    parsed = parse_patch(patch) if patch is not None else {}
    diffs = []
    for entry in report["files"]:
        edits = entry.get("edits", [])
        if not edits and entry["path"] not in parsed:
            continue
        hunks = hunks_from_patch(parsed[entry["path"]], edits) if entry["path"] in parsed else hunks_from_edits(edits)
        diffs.append({"id": f"diff-{len(diffs)}", "path": entry["path"], "edits": len(edits), "hunks": hunks,
                      "rules": sorted({e["rule"] for e in edits}), "python": entry["path"].endswith((".py", ".pyi")),
                      "old_lines": {line.old for h in hunks for line in h.lines if line.old is not None}})
    return diffs


def _finding_anchors(findings: list[dict], diffs: list[dict]) -> list[str | None]:
    # A finding links to its line in the file's diff when the diff shows it, else to the file.
    by_path = {d["path"]: d for d in diffs}
    anchors = []
    for f in findings:
        d = by_path.get(f["path"])
        anchors.append(None if d is None else f"{d['id']}-L{f['line']}" if f["line"] in d["old_lines"] else d["id"])
    return anchors


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def render_html(report: dict, patch: bytes | None = None) -> str:
    """The whole page as a string; `patch` is changes.patch when available."""
    env = environment("templates/report", autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["percent"] = percent
    # Our own CSS and JS are trusted and inlined verbatim; the CSP pins them by hash.
    css, js = (Markup(env.loader.get_source(env, name)[0]) for name in ("report.css", "report.js"))
    rows = file_rows(report)
    diffs = _diffs(report, patch)
    findings = report["findings"]
    return env.get_template("report.html.j2").render(
        r=report, stats=compute_stats(report), severities=SEVERITY_ORDER,
        rows=rows, review=[needs_review(row) for row in rows],
        odd=[row for row in rows if row["status"] in ("skipped", "failed")],
        diffs=diffs, diff_ids={d["path"]: d["id"] for d in diffs}, from_patch=patch is not None,
        anchors=_finding_anchors(findings, diffs),
        finding_codes=sorted({f["rule"] for f in findings}), finding_paths=sorted({f["path"] for f in findings}),
        css=css, js=js, csp=f"default-src 'none'; style-src {_csp_hash(css)}; script-src {_csp_hash(js)}",
    )


def write_html(report: dict, report_dir: Path) -> Path:
    """Write report_dir/report.html, using report_dir/changes.patch when present."""
    patch_path = report_dir / "changes.patch"
    patch = patch_path.read_bytes() if patch_path.is_file() else None
    target = report_dir / "report.html"
    target.write_text(render_html(report, patch), encoding="utf-8")
    return target
