"""conda environment files (environment.yml, conda.yml): what conda installs, and its `pip:` list.

Each item of `dependencies` is a conda package spec (`cudatoolkit=11.8`, `nvidia::cuda-nvcc`,
`pytorch-cuda=12.1`, `bitsandbytes>=0.41`); its name goes through the same requirement
policy and package table as a requirements file (conda's CUDA toolkit packages are in the
table), and a package the table drops is commented out as a requirement is, when the item
is alone on its line and its list keeps another item. Conda has no renamed distributions,
so a rename is only reported. The `pip:` list is a requirements file in YAML: each item is
read by the requirements file type's own line reader (edits where the item's text is its
value). A conda file is not a run config: the config rules never look at it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeVar

from porter.core.edits import Found
from porter.core.model import Finding, Skipped
from porter.core.textio import LineIndex
from porter.filetypes._common import TextFile, matched, open_yaml
from porter.filetypes._configtree import Mapping, Node, Scalar, Sequence, key_text, top_keys
from porter.filetypes.requirements import index_urls, requirement_line_findings
from porter.rules import ActiveRules, Rule
from porter.rules.kinds import REQUIREMENT_STRING, Matcher
from porter.tables.requirement_policy import RequirementPolicy, Verdict, requirement_findings

# `channel::name`, then the version and build (`=1.2`, `>=1.2`, `1.2 py310_cu121`).
_SPEC = re.compile(r"\s*(?:([^\s:=<>!]+)::)?([A-Za-z0-9_][A-Za-z0-9_.-]*)(.*)", re.DOTALL)
# conda packages whose PyPI distribution has another name.
_PYPI_NAMES = {"pytorch": "torch"}
# A build string of a CUDA build (`py310_cu121`, `cuda118_py39`).
_CUDA_BUILD = re.compile(r"(?:^|[_=\s.-])cu(?:da)?\d", re.IGNORECASE)
# conda packages that select the CUDA build of the pytorch channel's torch family (cudatoolkit
# alone only brings runtime libraries).
_CUDA_TORCH = frozenset({"pytorch-cuda", "pytorch-gpu"})


@dataclass(frozen=True)
class CondaView:
    """A conda environment file as its kinds read it: the text, its YAML documents, and the
    requirement policy (built once per file) its packages go through."""

    file: TextFile
    docs: list[Node]
    policy: RequirementPolicy


def dependency_findings(view: CondaView, rules: list[Rule]) -> list[Finding]:
    """The conda packages and the `pip:` list of every document's `dependencies`."""
    findings: list[Finding] = []
    for doc in view.docs:
        dependencies = top_keys(doc).get("dependencies")
        if isinstance(dependencies, Sequence):
            findings += _dependency_findings(view.policy, view.file, dependencies)
    return findings


# The kinds a conda environment file is matched with (porter/rules/kinds.py's Matcher), in the
# order their findings are listed: adding a kind is its matcher and a line.
CONDA_KINDS: tuple[Matcher[CondaView], ...] = (Matcher(REQUIREMENT_STRING, dependency_findings),)


def find_conda(path: str, data: bytes, rules: ActiveRules) -> Found | Skipped | None:
    """Findings (with edits) for one conda environment file (never raises for bad input)."""
    policy = RequirementPolicy.build(rules.rules, rules.version)
    if policy is None:
        return None  # (before the file is read: requirement-string is the one kind here)
    opened = open_yaml(path, data, "conda environment")
    if not isinstance(opened, tuple):
        return opened
    file, docs = opened
    from porter.filetypes._yamltree import yaml_problem

    return file.found(matched(CONDA_KINDS, CondaView(file, docs, policy), rules), yaml_problem)


def _dependency_findings(policy: RequirementPolicy, file: TextFile, dependencies: Sequence) -> list[Finding]:
    specs = [
        (item, item.value) for item in dependencies.items if isinstance(item, Scalar) and isinstance(item.value, str)
    ]
    policy = _policy_for(policy, [spec for _, spec in specs])
    findings = _items_findings(policy, file, conda_verdicts(policy, specs), len(dependencies.items))
    for item in dependencies.items:
        if isinstance(item, Mapping):
            for key, value in item.pairs:
                if key_text(key) == "pip" and isinstance(value, Sequence):
                    findings += _pip_findings(policy, file, value)
    return findings


T = TypeVar("T")


def conda_verdicts(policy: RequirementPolicy, specs: list[tuple[T, str]]) -> list[tuple[T, list[Verdict]]]:
    """(key, verdicts) for conda package specs (`cudatoolkit=11.8`, `nvidia::cuda-nvcc`), by
    their PyPI names; an environment file's items and `conda install` arguments alike."""
    policy = _policy_for(policy, [spec for _, spec in specs])
    return [
        (key, _review_conda(policy, match.group(2), match.group(3)))
        for key, spec in specs
        for match in [_SPEC.match(spec)]
        if match
    ]


def _policy_for(policy: RequirementPolicy, specs: list[str]) -> RequirementPolicy:
    """pytorch-cuda among the specs: torchvision comes as a CUDA build too."""
    names = {match.group(2).lower() for spec in specs for match in [_SPEC.match(spec)] if match}
    return policy.from_cuda_index() if names & _CUDA_TORCH else policy


def _review_conda(policy: RequirementPolicy, name: str, rest: str) -> list[Verdict]:
    """Verdicts on a conda package by its PyPI name; a CUDA build string pins a CUDA build."""
    if _CUDA_BUILD.search(rest):
        policy = policy.from_cuda_index()
    return policy.review(_PYPI_NAMES.get(name.lower(), name) + _pip_version(rest), editable=False)


def pip_requirement(spec: str) -> str:
    """A conda package spec as the PEP 508 requirement of its PyPI distribution
    (`pytorch=2.0.1=py3.9_cuda11.7_0` -> `torch==2.0.1.*`); the spec itself when it is not one."""
    match = _SPEC.match(spec)
    if match is None:
        return spec
    return _PYPI_NAMES.get(match.group(2).lower(), match.group(2)) + _pip_version(match.group(3))


# conda's version part: `=2.0.1` (2.0.1 or a patch of it), `==2.0.1`, `>=2.0,<2.5`, then a build string.
_CONDA_VERSION = re.compile(
    r"\s*(=|==|>=|<=|>|<|!=)\s*([0-9][0-9A-Za-z.*]*)((?:\s*,\s*(?:==|>=|<=|>|<|!=)\s*[0-9][0-9A-Za-z.*]*)*)(?:[=\s]|$)"
)


def _pip_version(rest: str) -> str:
    """The PEP 440 specifier of a conda spec's version part ("" when it has none or another
    form): the release is checked against the target's releases as a pip pin is."""
    match = _CONDA_VERSION.match(rest)
    if match is None:
        return ""
    operator, version, more = match.groups()
    if operator == "=":  # conda's `=2.0.1` is `2.0.1.*` in PEP 440
        operator, version = "==", version.rstrip(".*") + ".*"
    return f"{operator}{version}{more.replace(' ', '')}"


def _items_findings(
    policy: RequirementPolicy, file: TextFile, reviewed: list[tuple[Scalar, list[Verdict]]], total: int
) -> list[Finding]:
    """Findings for reviewed list items; a dropped item is commented out when it is alone on its
    line and the list keeps at least one item (an emptied `pip:` list would be null)."""
    dropped = sum(1 for _, verdicts in reviewed if any(v.drop for v in verdicts))
    may_drop = dropped < total
    findings: list[Finding] = []
    for item, verdicts in reviewed:
        lines = _item_lines(file.index, item) if may_drop else None
        findings += requirement_findings(policy, file.path, file.index, item.start, item.start, lines, verdicts)
    return findings


def _pip_findings(policy: RequirementPolicy, file: TextFile, items: Sequence) -> list[Finding]:
    """The `pip:` list, each item a requirements line."""
    lines = [item for item in items.items if isinstance(item, Scalar) and isinstance(item.value, str)]
    if any(policy.is_cuda_index(url) for item in lines for url in index_urls(item.value.split())):
        policy = policy.from_cuda_index()
    drops = sum(
        1
        for item in lines
        if not item.value.lstrip().startswith("-")
        and any(v.drop for v in policy.review(item.value.strip(), editable=False))
    )
    may_drop = drops < len(lines)
    findings: list[Finding] = []
    for item in lines:
        start = _body_start(file.text, item)
        value = item.value.strip()
        if start is None:  # escapes or folding: the text is not the value, so report only
            findings += requirement_findings(
                policy, file.path, file.index, item.start, item.start, None, policy.review(value, editable=False)
            )
            continue
        start += len(item.value) - len(item.value.lstrip())
        item_lines = _item_lines(file.index, item) if may_drop else None
        findings += requirement_line_findings(policy, file.path, file.index, start, value, item_lines)
    return findings


def _body_start(text: str, item: Scalar) -> int | None:
    """Where the value of a plain or simply quoted scalar starts in the text, if it is written as it is."""
    if item.style == "" and text[item.start : item.end] == item.value:
        return item.start
    if item.style in ("'", '"') and text[item.start + 1 : item.end - 1] == item.value:
        return item.start + 1
    return None


def _item_lines(index: LineIndex, item: Node) -> tuple[int, int] | None:
    """The line of a block-sequence item (`  - name  # comment`) that holds nothing else."""
    first, col = index.line_col(item.start)
    last, end_col = index.line_col(item.end)
    if first != last:
        return None
    line = index.line_text(first)
    if not re.fullmatch(r"[ \t]*-[ \t]+", line[: col - 1]) or not re.fullmatch(r"[ \t]*(?:#.*)?", line[end_col - 1 :]):
        return None
    return first, last
