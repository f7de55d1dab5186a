"""Does a module analysed in groups find what one analysis of the whole finds?

    python benchmarks/grouped_vs_whole.py TARGET DIR [DIR ...] [--group-chars N] [--processes N]

Every Python file under the DIRs (up to 400 KB) is analysed twice by the Python pipeline
(porter/python/analyze.py): whole, and in groups of statements beside a skeleton of the rest
(porter/python/grouped.py), by default the harshest cut, every top-level statement its own
group (`--group-chars 1`). The findings are compared after the reporting stage's merges, with
the APIs the op scan saw and the suppressions used; each difference is printed, then how many
files and findings differ. tests/test_grouped_analysis.py runs the same comparison on the rule
fixtures; this one is for real trees.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import warnings
from contextlib import contextmanager
from collections.abc import Iterator
from typing import Any

from porter.core.edits import Found
from porter.core.forked import processes_per_task
from porter.engine.reporting import merged_in_file
from porter.python import analyze, grouped
from porter.rules import ActiveRules, load_rules

MAX_BYTES = 400_000


@contextmanager
def analysed_in(group_chars: int | None) -> Iterator[None]:
    """Modules analysed whole (None), or in groups of `group_chars` whatever their size."""
    old = grouped.WHOLE_CHARS, grouped.GROUP_CHARS
    if group_chars is None:
        grouped.WHOLE_CHARS = 1 << 40
    else:
        grouped.WHOLE_CHARS, grouped.GROUP_CHARS = 0, group_chars
    try:
        yield
    finally:
        grouped.WHOLE_CHARS, grouped.GROUP_CHARS = old


def finding_key(f: Any) -> tuple:
    edit = (f.edit.start, f.edit.end, f.edit.replacement) if f.edit else None
    return (f.rule, f.line, f.col, f.severity, f.message, f.suggestion, edit)


def analysed(
    path: str, data: bytes, rules: ActiveRules, group_chars: int | None = None, processes: int = 1
) -> tuple[collections.Counter, tuple, frozenset] | None:
    """(the findings as the reporting stage merges them, the APIs seen, the suppressions used)
    of one file, whole or in groups; None where the pipeline finds nothing to analyse."""
    with analysed_in(group_chars), processes_per_task(processes):
        found = analyze.find_python(path, data, rules)
    if not isinstance(found, Found):
        return None
    findings = collections.Counter(finding_key(f) for f in merged_in_file(found.findings, rules, "python"))
    return findings, found.apis, frozenset(found.used)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target")
    parser.add_argument("dirs", nargs="+")
    parser.add_argument("--group-chars", type=int, default=1)
    parser.add_argument("--processes", type=int, default=1)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    rules = ActiveRules(load_rules(args.target))
    files = findings = differing_files = 0
    by_rule: collections.Counter = collections.Counter()
    for root in args.dirs:
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
            for name in sorted(n for n in names if n.endswith(".py")):
                path = os.path.join(folder, name)
                data = open(path, "rb").read()
                whole = analysed(path, data, rules) if len(data) <= MAX_BYTES else None
                if whole is None:
                    continue
                in_groups = analysed(path, data, rules, args.group_chars, args.processes)
                files += 1
                findings += sum(whole[0].values())
                if in_groups == whole:
                    continue
                differing_files += 1
                got = in_groups[0] if in_groups is not None else collections.Counter()
                for label, extra in (("whole only", whole[0] - got), ("in groups only", got - whole[0])):
                    for key in extra:
                        by_rule[key[0]] += 1
                        print(f"  {label}: {path}:{key[1]}:{key[2]} {key[0]} {key[4][:100]}")
                if in_groups is None or in_groups[1:] != whole[1:]:
                    print(f"  APIs or suppressions used differ: {path}")
    print(f"{files} files, {findings} findings; {differing_files} files differ, {sum(by_rule.values())} findings")
    if by_rule:
        print("by rule:", ", ".join(f"{code} {n}" for code, n in by_rule.most_common()))
    return 1 if differing_files else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
