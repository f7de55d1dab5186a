"""What ships with porter cites only what ships with it or is public: no rule explanation,
table source, docstring or template may point at the project's internal notes (FACTS.md,
PATTERNS.md, DESIGN.md, ...) or at folders beside the checkout, which a user of the wheel
does not have. Each such reference names the source itself (vendor repository and path,
document URL, release note) instead."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What the wheel and the sdist's user-facing files hold (pyproject: packages and force-include).
SHIPPED = [
    ROOT / "porter",
    ROOT / "rules",
    ROOT / "op_tables",
    ROOT / "pyproject.toml",
    ROOT / "README.md",
    ROOT / ".pre-commit-hooks.yaml",
    ROOT / "examples",
]
INTERNAL = re.compile(r"\b(?:FACTS|PATTERNS|DESIGN|EMULATOR|STYLE)\.md\b|\.\./shared\b|shared/(?:docs|data)\b|/work/")


def _tracked() -> set[Path] | None:
    """The files git tracks, in a checkout: what a user generates there (the README's
    `examples/cuda_trainer_mlu`, whose report holds local paths) is not shipped."""
    import subprocess

    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None  # an sdist: every file in it ships
    return {ROOT / name for name in listed.decode("utf-8", "surrogateescape").split("\0") if name}


def shipped_files() -> list[Path]:
    tracked = _tracked()
    out = []
    for entry in SHIPPED:
        files = [entry] if entry.is_file() else [p for p in entry.rglob("*") if p.is_file()]
        out += [
            p
            for p in files
            if "__pycache__" not in p.parts and p.suffix not in (".pyc",) and (tracked is None or p in tracked)
        ]
    return out


def internal_references(text: str) -> list[str]:
    return [m.group(0) for m in INTERNAL.finditer(text)]


def test_the_pattern_catches_what_it_must():
    assert internal_references("no MLU backend (FACTS.md)") == ["FACTS.md"]
    assert internal_references("default ../shared/data") == ["../shared"]
    assert internal_references("see /work/shared/docs/PATTERNS.md") == ["/work/", "shared/docs", "PATTERNS.md"]
    assert internal_references("Cambricon/torch_mlu, torch_mlu/__init__.py; README.md") == []


def test_no_shipped_file_cites_internal_notes():
    files = shipped_files()
    assert len(files) > 50 and any(p.suffix == ".toml" for p in files) and any(p.suffix == ".j2" for p in files)
    found = []
    for path in files:
        text = path.read_bytes().decode("utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), 1):
            for ref in internal_references(line):
                found.append(f"{path.relative_to(ROOT)}:{lineno}: {ref}")
    assert not found, "cite the source itself, not porter's internal notes:\n" + "\n".join(found)


def test_rule_explanations_cite_only_public_sources():
    from porter.rules import TARGETS, load_rules

    for target in TARGETS:
        for rule in load_rules(target).rules:
            for text in (rule.summary, rule.why, rule.fix or "", rule.suggestion or "", rule.message or ""):
                assert not internal_references(text), f"{target} {rule.code}: {text}"
