"""Findings folded across files: one decision, one finding.

A folder of kernel modules porter keeps whole (`vendored/triton/*.py`, each importing Triton
at its top level) is one thing for the user to decide on, the feature that uses it, not
seven: the first module's finding names the others, and theirs are dropped. A finding takes
part when its `subject` starts with `KEPT_MODULE` (porter/python/kinds/device_guard.py).

So is the same report in every script of a folder (28 GLUE launch scripts that each export
CUBLAS_WORKSPACE_CONFIG): for a rule marked `once_per_folder`, findings of one folder with the
same message and severity are one, naming the other files; the first file keeps each of its
own lines (nvidia-smi called twice in one script is two places to change). A rule marked
`once_per_tree` is one finding per severity for the whole tree, a decision about the
environment or the framework rather than the file (install torchvision from the CPU index,
register an MLU accelerator with Lightning), said once for 58 requirement files or 154
scripts; errors excepted: each is a line to change where it is.

A rule marked `once_per_subject_in_tree` is one finding per subject for the whole tree: a
library (megatron.core imported by 20 of ms-swift's modules, vllm by 8) or a config key
(LitGPT's 16 qlora.yaml presets that each set `quantize: bnb.nf4`) is one decision, whatever
each file's own message says (which module of the library, how many imports). Its errors stay
where they are unless the rule says "errors-too": a setting that asks for a feature the target
lacks, repeated in every preset, is one decision too; then every other file is named, as the
list of what that decision touches.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import replace
from typing import TypeVar

from porter.core.model import KEPT_MODULE, FileCheck, FileResult, Finding
from porter.rules.selection import FOLD_SUBJECT, FOLD_SUBJECT_ALL, FOLD_TREE

R = TypeVar("R", FileResult, FileCheck)

_NAMED = 5  # a tree-wide fold names this many other files, then counts the rest
_TREE_WIDE = (FOLD_TREE, FOLD_SUBJECT, FOLD_SUBJECT_ALL)


def fold_across_files(results: list[R], scopes: Mapping[str, str] | None = None) -> list[R]:
    """`results` (in path order) with the kept-module findings of each folder folded into
    its first module's, and the equal findings of the codes in `scopes` (code -> "folder" or
    "tree", Selection.fold_scopes) into the first file's of their folder or tree; a file's
    other findings are untouched."""
    scopes = scopes or {}
    # (the folder, or None for the whole tree; the fold key, how first) -> (result, finding) places
    groups: dict[tuple[str | None, tuple[str, ...]], list[tuple[int, int]]] = defaultdict(list)
    for i, result in enumerate(results):
        folder = result.path.rpartition("/")[0]
        for j, finding in enumerate(result.findings):
            key = _fold_key(finding, scopes)
            if key is not None:
                groups[(None if key[0] in _TREE_WIDE else folder, key)].append((i, j))
    dropped: dict[int, set[int]] = defaultdict(set)
    out = list(results)
    for (where, (how, *_)), places in groups.items():
        if len(places) < 2:
            continue
        # The first file keeps its own repeats (each on its line); the other files' are folded.
        (i, j), rest = places[0], [(k, m) for k, m in places[1:] if k != places[0][0]]
        paths = list(dict.fromkeys(results[k].path for k, _ in rest))
        if not paths:
            continue
        first = results[i].findings[j]
        findings = list(out[i].findings)
        findings[j] = replace(
            first, message=_folded_message(first.message, how, paths, where, every=first.severity == "error")
        )
        out[i] = replace(out[i], findings=tuple(findings))
        for k, m in rest:
            dropped[k].add(m)
    for k, gone in dropped.items():
        result = out[k]
        kept = [m for m in range(len(result.findings)) if m not in gone]
        changes: dict = {"findings": tuple(result.findings[m] for m in kept)}
        if isinstance(result, FileCheck) and len(result.line_hashes) == len(result.findings):
            changes["line_hashes"] = tuple(result.line_hashes[m] for m in kept)
        out[k] = replace(result, **changes)
    return out


def _folded_message(message: str, how: str, paths: list[str], folder: str | None, every: bool = False) -> str:
    """The first file's message, naming the other files it stands for: by name within a
    folder, by path (the first few, then a count; `every`: all of them, for a folded error)
    across the tree (`folder` None)."""
    many = len(paths) > 1
    if folder is None:
        named = len(paths) if every else _NAMED
        names = ", ".join(paths[:named]) + (f" and {len(paths) - named} more" if len(paths) > named else "")
        return f"{message} (also in {len(paths)} other file{'s' * many} of the tree: {names})"
    names, where = ", ".join(p.rpartition("/")[2] for p in paths), folder or "the top folder"
    if how == KEPT_MODULE:
        they = f"are the {len(paths)} other modules" if many else "is the 1 other module"
        return f"{message} (and so {they} of {where} that import{'' if many else 's'} it: {names})"
    return f"{message} (the same in {len(paths)} other file{'s' * many} of {where}: {names})"


def _fold_key(finding: Finding, scopes: Mapping[str, str]) -> tuple[str, ...] | None:
    """What a finding is folded by (its scope first), or None when it is not folded."""
    if finding.subject and finding.subject.startswith(KEPT_MODULE):
        return KEPT_MODULE, finding.rule, finding.subject
    scope = scopes.get(finding.rule)
    if scope is None or finding.edit is not None:
        return None
    if scope == FOLD_TREE:
        # The rule's one decision for the tree (torchvision and torchaudio, Trainer and Fabric),
        # but an error is a line to change in each file (a pinned CUDA build): never folded.
        return None if finding.severity == "error" else (scope, finding.rule, finding.severity)
    if scope in (FOLD_SUBJECT, FOLD_SUBJECT_ALL):
        # One library or setting, one decision (the subject; else the message names it).
        if finding.severity == "error" and scope == FOLD_SUBJECT:
            return None
        return scope, finding.rule, finding.severity, finding.subject or finding.message
    return scope, finding.rule, finding.severity, finding.message  # a folder: equal reports only
