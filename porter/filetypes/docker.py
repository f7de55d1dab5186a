"""Container files: Dockerfiles (compose files: porter/files/compose.py, same rules).

Findings, and edits only where a rule says exactly what to write:
- a base image built for CUDA (`container-image` rules: FROM, compose `image:`, `*IMAGE`
  build args), with the target's base image as the suggestion;
- environment names (ENV, compose `environment:`) of `container-env-var` rules, which use
  the names and renames of the env-var rule they name (`from_rule`) or their own `names`;
  renamed only where that table has the exact new name (CUDA_VISIBLE_DEVICES ->
  MLU_VISIBLE_DEVICES on MLU);
- NVIDIA device requests in compose (`compose-key` rules: `driver: nvidia`, `gpus:`, ...);
- each requirement, wheel and index of a RUN `pip install`, through the shared requirement
  policy: reported, never rewritten (a shell line is not a requirements file).
A Dockerfile is read as Docker reads it (continuations, comment lines inside them,
heredocs), with ARG/ENV defaults substituted where FROM and RUN use them. A compose file is
read by PyYAML's parser into a tree with exact spans (porter/filetypes/compose.py), which
claims compose files so the YAML config handler does not.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

from porter.core.edits import Found
from porter.core.model import Edit, Finding, Severity, Skipped
from porter.filetypes._installs import install_verdicts
from porter.filetypes.requirements import text_found
from porter.python.kinds.env_var import variable_verdict
from porter.rules import ActiveRules, Rule
from porter.rules.kinds import ContainerEnvVarParams, ContainerImageParams
from porter.tables.requirement_policy import RequirementPolicy, requirement_findings
from porter.core.textio import LineIndex

_VAR = re.compile(r"\$(?:\{([A-Za-z_]\w*)(?::?([-+])([^}]*))?\}|([A-Za-z_]\w*))")
_HEREDOC = re.compile(r"<<-?\s*([\"']?)([A-Za-z_]\w*)\1")
_SEPARATORS = {"&&", "||", ";", "|", "&"}
_PIP_INDEX_ENV = {"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"}


class Context:
    """The rules of one container file and the findings gathered so far."""

    def __init__(self, rules: ActiveRules, path: str, index: LineIndex) -> None:
        self.images = rules.of_kind("container-image")
        self.keys = rules.of_kind("compose-key")
        # (rule, the rule whose names and renames it uses: an env-var rule, or itself)
        env = [
            (r, rules.by_code(source) if (source := ContainerEnvVarParams.of(r).from_rule) is not None else r)
            for r in rules.of_kind("container-env-var")
        ]
        self.env = [(rule, source) for rule, source in env if source is not None]
        self.policy = RequirementPolicy.build(rules.rules, rules.version)
        self.path, self.index = path, index
        self.findings: list[Finding] = []
        self.cursor = 0  # where the next word of the current instruction is looked for
        self.reported: set[tuple[str, int]] = set()  # (rule, compose list item) already reported

    def add(
        self,
        rule: Rule,
        offset: int,
        message: str,
        subject: str,
        edit: tuple[int, str] | None = None,
        severity: Severity | None = None,
    ) -> None:
        """A finding at `offset`; `edit` (offset, new text) replaces `subject`, if it is really there."""
        line, col = self.index.line_col(offset)
        change = None
        if edit and self.index.text.startswith(subject, edit[0]):
            change = Edit(rule.code, edit[0], edit[0] + len(subject), edit[1])
        self.findings.append(
            Finding(
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
        )

    def image(self, offset: int, image: str, written: str) -> None:
        for rule in self.images:
            if any(re.search(p, image) for p in ContainerImageParams.of(rule).image_patterns):
                shown = image if image == written else f"{written} (= {image})"
                self.add(rule, offset, f"{rule.message or rule.summary}: {shown}", image)

    def env_name(self, offset: int, name: str, value: str | None) -> None:
        verdict = variable_verdict(name, self.env)
        if verdict is not None:
            rule, new, message, severity = verdict
            self.add(rule, offset, message, name, (offset, new) if new is not None else None, severity)
        if name in _PIP_INDEX_ENV and value and self.policy:
            self.requirement_verdicts(offset, self.policy.review_url(value))

    def requirement_verdicts(self, offset: int, verdicts: list) -> None:
        self.findings += requirement_findings(self.policy, self.path, self.index, offset, offset, None, verdicts)


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


def dockerfile_findings(ctx: Context) -> list[Finding]:
    """Findings (and exact ENV renames) for one Dockerfile."""
    index, text = ctx.index, ctx.index.text
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
                ctx.image(start, image, words[0])
        elif keyword == "ENV":
            for name, value, offset in _env_pairs(text, start, args):
                variables[name] = value
                ctx.env_name(offset, name, value)
        elif keyword == "RUN" and ctx.policy:
            _pip_installs(ctx, start, args, variables)
    return ctx.findings


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


def _pip_installs(ctx: Context, start: int, args: str, variables: dict[str, str]) -> None:
    """Report each requirement, wheel and index of every `pip install`, and each package of
    every `conda install`, in a RUN command."""
    try:
        lexer = shlex.shlex(args, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return  # an unbalanced quote: Docker would pass it to the shell, which fails too
    commands, current = [], []
    for word in words:
        if word in _SEPARATORS:
            commands.append(current)
            current = []
        else:
            current.append(word)
    commands.append(current)
    for command in commands:
        for word, verdicts in install_verdicts(ctx.policy, command, lambda w: expand(w, variables)) or ():
            if verdicts:
                ctx.requirement_verdicts(_where(ctx, start, word), verdicts)


def _where(ctx: Context, start: int, word: str) -> int:
    """Offset of `word` in the instruction that begins at `start`, after the last one found."""
    ctx.cursor = max(ctx.cursor, start)
    found = re.compile(rf"(?<![\w.-]){re.escape(word)}(?![\w.-])").search(ctx.index.text, ctx.cursor)
    if found is None:
        return start
    ctx.cursor = found.end()
    return found.start()


def container_finder(kind: str, find: Callable[[Context], list[Finding]]):
    """The pipeline of one container file type (Dockerfile, compose) over its `find`."""

    def found(path: str, data: bytes, rules: ActiveRules) -> Found | Skipped | None:
        """Findings (with edits) for one container file (never raises for bad input)."""
        return text_found(path, data, kind, lambda text: find(Context(rules, path, LineIndex(text))))

    return found


find_dockerfile = container_finder("dockerfile", dockerfile_findings)
