"""Dockerfiles (compose files: porter/filetypes/compose.py; what both share:
porter/filetypes/_containers.py).

Findings, and edits only where a rule says exactly what to write, by the kinds of
DOCKERFILE_KINDS:
- a base image built for CUDA (`container-image` rules: FROM), with the target's base image
  as the suggestion;
- environment names (ENV) of `container-env-var` rules, which use the names and renames of
  the env-var rule they name (`from_rule`) or their own `names`; renamed only where that table
  has the exact new name (CUDA_VISIBLE_DEVICES -> MLU_VISIBLE_DEVICES on MLU);
- each requirement, wheel and index of a RUN `pip install` (and an ENV PIP_INDEX_URL), through
  the shared requirement policy: reported, never rewritten (a shell line is not a requirements
  file).
A Dockerfile is read once, as Docker reads it (continuations, comment lines inside them,
heredocs), into a view with ARG/ENV defaults substituted where FROM and RUN use them.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field

from porter.core.edits import Found
from porter.core.model import Finding, Skipped
from porter.core.textio import LineIndex
from porter.filetypes._containers import (
    ContainerView,
    EnvName,
    Image,
    env_findings,
    image_findings,
    index_findings,
    index_settings,
)
from porter.filetypes._installs import install_verdicts
from porter.filetypes._common import matched
from porter.filetypes.requirements import text_found
from porter.rules import ActiveRules, Rule
from porter.rules.kinds import REQUIREMENT_STRING, Matcher

_VAR = re.compile(r"\$(?:\{([A-Za-z_]\w*)(?::?([-+])([^}]*))?\}|([A-Za-z_]\w*))")
_HEREDOC = re.compile(r"<<-?\s*([\"']?)([A-Za-z_]\w*)\1")
_SEPARATORS = {"&&", "||", ";", "|", "&"}


@dataclass(frozen=True)
class Run:
    """A RUN instruction: where it starts, its command line, and the ARG/ENV values set before it."""

    offset: int
    args: str
    variables: dict[str, str]


@dataclass(frozen=True)
class DockerView(ContainerView):
    """A Dockerfile as its kinds read it: the container settings, and its RUN lines."""

    runs: list[Run] = field(default_factory=list)


def expand(value: str, variables: dict[str, str]) -> str | None:
    """`value` with $NAME, ${NAME}, ${NAME:-x} and ${NAME:+x} replaced; None if one is unknown."""
    missing = []

    def sub(match: re.Match) -> str:
        name, op, word = match.group(1) or match.group(4), match.group(2), match.group(3)
        if op == "-" and not variables.get(name):
            return word
        if op == "+":
            return word if variables.get(name) else ""
        if name not in variables:
            missing.append(name)
            return ""
        return variables[name]

    out = _VAR.sub(sub, value)
    return None if missing else out


def instructions(index: LineIndex) -> list[tuple[int, str]]:
    """(offset of the first character, logical text) per instruction.

    Physical lines are joined where they end with a backslash; comment lines inside a
    continuation are dropped, and heredoc bodies are skipped, as Docker does.
    """
    out = []
    number, total = 1, len(index.starts)
    while number <= total:
        line = index.line_text(number)
        if not line.strip() or line.lstrip().startswith("#"):
            number += 1
            continue
        start = index.starts[number - 1] + len(line) - len(line.lstrip())
        parts = [line.strip()]
        while parts[-1].endswith("\\") and number < total:
            parts[-1] = parts[-1][:-1]
            number += 1
            following = index.line_text(number)
            if not following.lstrip().startswith("#"):
                parts.append(following.strip())
        text = " ".join(parts)
        for heredoc in _HEREDOC.finditer(text):
            while number < total and index.line_text(number + 1).strip() != heredoc.group(2):
                number += 1
            number += 1
        out.append((start, text))
        number += 1
    return out


def read_dockerfile(path: str, text: str, rules: ActiveRules) -> DockerView:
    """The Dockerfile's images, ENV names and RUN lines, with ARG/ENV values substituted as
    Docker does where FROM and RUN use them."""
    index = LineIndex(text)
    view = DockerView(path, index, rules)
    variables: dict[str, str] = {}
    for start, logical in instructions(index):
        keyword, _, args = logical.partition(" ")
        keyword = keyword.upper()
        if keyword == "ARG":
            for name, value, _ in _env_pairs(text, start, args, legacy=False):
                variables[name] = value
        elif keyword == "FROM":
            words = [w for w in args.split() if not w.startswith("--")]
            image = expand(words[0], variables) if words else None
            if image:
                view.images.append(Image(start, image, words[0]))
        elif keyword == "ENV":
            for name, value, offset in _env_pairs(text, start, args):
                variables[name] = value
                view.env.append(EnvName(offset, name, value))
        elif keyword == "RUN":
            view.runs.append(Run(start, args, dict(variables)))
    return view


def _env_pairs(text: str, start: int, args: str, legacy: bool = True) -> list[tuple[str, str, int]]:
    """(name, value, offset of the name in the file) for `ENV A=1 B=2`, `ENV A 1`, `ARG A=1`."""
    try:
        words = shlex.split(args, posix=True)
    except ValueError:
        words = args.split()
    pairs = [w.partition("=") for w in words]
    if legacy and words and not pairs[0][1]:
        pairs = [(words[0], "=", " ".join(words[1:]))]  # legacy `ENV NAME value`
    out, cursor = [], start
    for name, eq, value in pairs:
        if not eq or not re.fullmatch(r"[A-Za-z_]\w*", name):
            continue
        found = re.compile(rf"(?<![\w$]){re.escape(name)}(?=[=\s])").search(text, cursor)
        if found is None:
            continue
        cursor = found.end()
        out.append((name, value, found.start()))
    return out


def install_findings(view: DockerView, rules: list[Rule]) -> Iterator[Finding]:
    """What the image installs, in document order: the wheel index ENV points pip at, and each
    requirement, wheel and index of every RUN `pip install` and each package of every `conda
    install` (reported: a shell line is not a requirements file)."""
    policy = view.policy()
    if policy is None:
        return
    cursor = 0  # where the next installed word is looked for: after the last one found
    steps: list[EnvName | Run] = [*index_settings(view), *view.runs]
    for step in sorted(steps, key=lambda step: step.offset):
        if isinstance(step, EnvName):
            yield from index_findings(view, policy, step)
            continue
        for command in _commands(step.args):
            for word, verdicts in install_verdicts(policy, command, lambda w: expand(w, step.variables)) or ():
                if verdicts:
                    cursor = max(cursor, step.offset)
                    found = re.compile(rf"(?<![\w.-]){re.escape(word)}(?![\w.-])").search(view.index.text, cursor)
                    if found is not None:
                        cursor = found.end()
                    at = found.start() if found is not None else step.offset
                    yield from view.verdict_findings(policy, at, verdicts)


def _commands(args: str) -> list[list[str]]:
    """The words of each command of a RUN line (`a && b; c | d`); none when a quote is unbalanced
    (Docker would pass it to the shell, which fails too)."""
    try:
        lexer = shlex.shlex(args, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return []
    commands: list[list[str]] = [[]]
    for word in words:
        if word in _SEPARATORS:
            commands.append([])
        else:
            commands[-1].append(word)
    return commands


# The kinds a Dockerfile is matched with (porter/rules/kinds.py's Matcher), in the order their
# findings are listed: adding a kind is its matcher and a line.
DOCKERFILE_KINDS: tuple[Matcher[DockerView], ...] = (
    Matcher("container-image", image_findings),  # FROM
    Matcher("container-env-var", env_findings),  # ENV
    Matcher(REQUIREMENT_STRING, install_findings),  # ENV PIP_INDEX_URL, RUN pip install / conda install
)


def find_dockerfile(path: str, data: bytes, rules: ActiveRules) -> Found | Skipped | None:
    """Findings (with edits) for one Dockerfile (never raises for bad input)."""
    return text_found(
        path, data, "dockerfile", lambda text: matched(DOCKERFILE_KINDS, read_dockerfile(path, text, rules), rules)
    )
