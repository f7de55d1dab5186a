"""Kind `vendor-path`: files written for another accelerator (or already for the target).

`examples/ascend/*.yaml`, `requirements/npu.txt`, `docker/docker-rocm/Dockerfile` already
handle their own device, and code that handles other devices must not change.
A path whose directory names or file-name words include one of the rule's `words` is
copied unchanged, with one `info` finding saying why, whatever its file type.

So is the CUDA counterpart of such a path for the target itself: `docker/docker-cuda/` in a
tree that has `docker/docker-npu/` (or `requirements/cuda.txt` beside `requirements/npu.txt`)
is the setup for CUDA machines, kept for them; the tree's own one for the target (`own`) is
what runs there, and porting the CUDA one would make a second.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from porter.core.model import Finding
from porter.rules import Rule
from porter.rules.kinds import Matcher, VendorPathParams

KIND = "vendor-path"

_WORD = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=None)
def _any_word(words: tuple[str, ...]) -> re.Pattern:
    """Matches wherever one of `words` is part of a path: every path `vendor_word` marks, and more."""
    return re.compile("|".join(map(re.escape, words)) or "(?!)")


def vendor_word(rel: str, rules: list[Rule]) -> tuple[Rule, str] | None:
    """The rule and the word that mark `rel` as another vendor's file, else None."""
    lowered = rel.lower()
    if not any(_any_word(tuple(VendorPathParams.of(rule).words)).search(lowered) for rule in rules):
        return None  # no rule's word is even part of the path (most paths): no need to split it
    parts = lowered.split("/")
    words = set(_WORD.findall(" ".join(parts[:-1]))) | set(_WORD.findall(parts[-1].rsplit(".", 1)[0]))
    for rule in rules:
        hit = next((w for w in VendorPathParams.of(rule).words if w in words), None)
        if hit is not None:
            return rule, hit
    return None


_CUDA_WORD = "cuda"


def cuda_counterpart(rel: str, rules: list[Rule], present: frozenset[str]) -> tuple[Rule, str] | None:
    """(rule, the path of the target's own counterpart) when `rel`, or a folder it is in, is
    named for CUDA and the tree (`present`: its files and folders) has the same name for the
    target, else None."""
    if _CUDA_WORD not in rel.lower():
        return None
    parts = rel.split("/")
    for i, part in enumerate(parts):
        stem = part.rsplit(".", 1)[0] if i == len(parts) - 1 else part
        if _CUDA_WORD not in _WORD.findall(stem.lower()):
            continue
        for rule in rules:
            for own in VendorPathParams.of(rule).own:
                swapped = re.sub(_CUDA_WORD, own, part, flags=re.IGNORECASE)
                other = "/".join([*parts[:i], swapped])
                if other in present:
                    return rule, other
    return None


def counterpart_finding(rel: str, rule: Rule, other: str) -> Finding:
    """The one finding of a CUDA file kept beside the tree's own one for the target."""
    return Finding(
        rule.code,
        rule.severity,
        rel,
        1,
        1,
        f"kept as it is: the CUDA counterpart of {other}, which the tree already has for this target",
        rule.suggestion,
        subject=other,
    )


def kept_finding(rel: str, rule: Rule, word: str) -> Finding:
    """The one finding of a file kept for another vendor."""
    whose = "already for this target" if word in VendorPathParams.of(rule).own else "for another device or vendor"
    return Finding(
        rule.code,
        rule.severity,
        rel,
        1,
        1,
        f"kept as it is: a file {whose} ({word!r} in its path)",
        rule.suggestion,
        subject=word,
    )


@dataclass(frozen=True)
class PathView:
    """A path of the tree, before its file is read, with every file and folder the tree has
    (`present`, where a CUDA path's twin for the target is looked up; empty when no path of
    the tree names CUDA)."""

    rel: str
    present: frozenset[str]


def find(view: PathView, rules: list[Rule]) -> list[Finding]:
    """The one finding of a path kept as it is, another vendor's (a word of a rule's in it) or
    the CUDA twin of the tree's own for the target; none for a path that is ported."""
    vendor = vendor_word(view.rel, rules)
    if vendor is not None:
        return [kept_finding(view.rel, *vendor)]
    twin = cuda_counterpart(view.rel, rules, view.present)
    return [counterpart_finding(view.rel, *twin)] if twin is not None else []


# The kinds a path is matched with before its file is read (porter/engine/runner.py), behind
# the one interface of every file type's kinds (porter/rules/kinds.py Matcher).
PATH_KINDS: tuple[Matcher[PathView], ...] = (Matcher(KIND, find),)
