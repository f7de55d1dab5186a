"""Package installs on a command line: `pip install ...` and `conda install ...` (mamba and
micromamba too, and `conda create ... PKG`), as shell scripts and Dockerfile RUN lines hold
them. Each installed package is reviewed like a requirement (pip's) or like an item of a
conda environment file (conda's): reported where the command names it, never edited.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence

from porter.filetypes.conda import conda_verdicts
from porter.filetypes.requirements import pip_argument_verdicts, pip_install_start
from porter.tables.requirement_policy import RequirementPolicy, Verdict

_CONDA = re.compile(r"(?:conda|mamba|micromamba)")
# conda's options that take a value (`-c nvidia`, `--name env`, `--file spec.txt`).
_CONDA_VALUE_OPTIONS = frozenset(
    {"-c", "--channel", "-n", "--name", "-p", "--prefix", "--file", "--solver", "--repodata-fn", "--experimental"}
)


def install_verdicts(
    policy: RequirementPolicy, values: Sequence[str | None], resolve: Callable[[str], str | None] = lambda w: w
) -> list[tuple[str, list[Verdict]]] | None:
    """(word as written, verdicts) for what one command installs with pip or conda, given its
    words as plain values (None for a word that is not literal); None when it installs nothing."""
    first = pip_install_start(values)
    if first is not None:
        return pip_argument_verdicts(policy, [v for v in values[first:] if v is not None], resolve)
    first = conda_install_start(values)
    if first is not None:
        return conda_argument_verdicts(policy, [v for v in values[first:] if v is not None], resolve)
    return clone_verdicts(policy, values, resolve)


def clone_verdicts(
    policy: RequirementPolicy, values: Sequence[str | None], resolve: Callable[[str], str | None] = lambda w: w
) -> list[tuple[str, list[Verdict]]] | None:
    """`git clone URL` of a distribution's source repository (apex, flash-attention): in a
    Dockerfile or setup script it is cloned to be built, so it is reviewed as that distribution."""
    for i, value in enumerate(values[:-1]):
        if posixpath.basename(value or "") == "git" and values[i + 1] == "clone":
            words = [w for w in values[i + 2 :] if w is not None and not w.startswith("-")]
            url = resolve(words[0]) if words else None
            verdicts = policy.review_source(url) if url else []
            return [(words[0], verdicts)] if verdicts else None
    return None


def conda_install_start(values: Sequence[str | None]) -> int | None:
    """Where the arguments of `conda install` / `conda create` begin, else None."""
    for i, value in enumerate(values[:-1]):
        if _CONDA.fullmatch(posixpath.basename(value or "")) and values[i + 1] in ("install", "create"):
            return i + 2
    return None


def conda_argument_verdicts(
    policy: RequirementPolicy, words: list[str], resolve: Callable[[str], str | None] = lambda w: w
) -> list[tuple[str, list[Verdict]]]:
    """(word as written, verdicts) for the package specs among conda's arguments."""
    specs: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("-"):
            if word in _CONDA_VALUE_OPTIONS:
                i += 1  # the option's value is not a package
        else:
            specs.append(word)
        i += 1
    resolved = [(word, resolve(word)) for word in specs]
    return conda_verdicts(policy, [(word, value) for word, value in resolved if value])
