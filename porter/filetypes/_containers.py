"""What Dockerfiles and compose files share: the settings a container file's walk collects once
(`ContainerView`), and the matchers of the kinds both match.

Each file type reads its own syntax (porter/filetypes/docker.py, compose.py) into one view,
and its table lists the kinds it matches (porter/rules/kinds.py's Matcher), each reading the
part of the view it needs. The walk happens once, before any matcher, so a file costs what it
did when the walk applied every kind as it went; each matcher goes over its own short list.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from porter.core.model import Edit, Finding, Severity
from porter.core.textio import LineIndex
from porter.python.kinds.env_var import variable_verdict
from porter.rules import ActiveRules, Rule
from porter.rules.kinds import ContainerEnvVarParams, ContainerImageParams
from porter.tables.requirement_policy import RequirementPolicy, Verdict, requirement_findings

# Variables that name where pip installs from: their value is reviewed like `pip -i URL`.
_PIP_INDEX_ENV = frozenset({"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"})


@dataclass(frozen=True)
class Image:
    """A base image: FROM, compose `image:`, an `*IMAGE` build arg. `written`: as the file
    writes it (before ARG defaults are substituted)."""

    offset: int
    image: str
    written: str


@dataclass(frozen=True)
class EnvName:
    """A variable the container sets (ENV, compose `environment:`), at its name."""

    offset: int
    name: str
    value: str | None


@dataclass(frozen=True)
class ContainerView:
    """A container file as every container kind reads it: its text, what its walk collected
    (in document order) and the run's rules, for a kind that reads another's (`from_rule`, the
    requirement policy). A file type's view adds what only it collects (a Dockerfile's RUN
    lines, a compose file's device requests), for its own matchers."""

    path: str
    index: LineIndex
    rules: ActiveRules
    images: list[Image] = field(default_factory=list)
    env: list[EnvName] = field(default_factory=list)

    def finding(
        self,
        rule: Rule,
        offset: int,
        message: str,
        subject: str,
        edit: tuple[int, str] | None = None,
        severity: Severity | None = None,
    ) -> Finding:
        """A finding at `offset`; `edit` (offset, new text) replaces `subject`, if it is really there."""
        line, col = self.index.line_col(offset)
        change = None
        if edit and self.index.text.startswith(subject, edit[0]):
            change = Edit(rule.code, edit[0], edit[0] + len(subject), edit[1])
        return Finding(
            rule.code,
            severity or rule.severity,
            self.path,
            line,
            col,
            message,
            rule.suggestion,
            change,
            subject=subject,
        )

    def policy(self) -> RequirementPolicy | None:
        """The requirement policy; None without requirement-string rules."""
        return RequirementPolicy.build(self.rules.rules, self.rules.version)

    def verdict_findings(self, policy: RequirementPolicy, offset: int, verdicts: list[Verdict]) -> list[Finding]:
        """The findings of the policy's verdicts on what is installed at `offset` (never edits)."""
        return requirement_findings(policy, self.path, self.index, offset, offset, None, verdicts)


def image_findings(view: ContainerView, rules: list[Rule]) -> Iterator[Finding]:
    """Base images built for CUDA."""
    for use in view.images:
        for rule in rules:
            if any(re.search(p, use.image) for p in ContainerImageParams.of(rule).image_patterns):
                shown = use.image if use.image == use.written else f"{use.written} (= {use.image})"
                yield view.finding(rule, use.offset, f"{rule.message or rule.summary}: {shown}", use.image)


def env_findings(view: ContainerView, rules: list[Rule]) -> Iterator[Finding]:
    """Variables of an env-var rule (`from_rule`: its names and renames) or of the rule's own
    `names`: renamed where that table has the exact new name, else reported."""
    sources = []  # (rule, the rule whose names and renames it uses: an env-var rule, or itself)
    for rule in rules:
        named = ContainerEnvVarParams.of(rule).from_rule
        source = rule if named is None else view.rules.by_code(named)
        if source is not None:
            sources.append((rule, source))
    for setting in view.env:
        verdict = variable_verdict(setting.name, sources)
        if verdict is not None:
            rule, new, message, severity = verdict
            at = setting.offset
            yield view.finding(rule, at, message, setting.name, (at, new) if new is not None else None, severity)


def index_settings(view: ContainerView) -> list[EnvName]:
    """The variables that point pip at a wheel index (`ENV PIP_INDEX_URL=...`), with a value."""
    return [setting for setting in view.env if setting.name in _PIP_INDEX_ENV and setting.value]


def index_findings(view: ContainerView, policy: RequirementPolicy, setting: EnvName) -> list[Finding]:
    """One such variable's index, reviewed like `pip -i URL`."""
    return view.verdict_findings(policy, setting.offset, policy.review_url(setting.value or ""))


def index_env_findings(view: ContainerView, rules: list[Rule]) -> Iterator[Finding]:
    """The wheel indexes a container points pip at (a compose file's only requirements)."""
    policy = view.policy()
    if policy is None:
        return
    for setting in index_settings(view):
        yield from index_findings(view, policy, setting)
