"""pip requirements files: `requirements*.txt`, `requirements/*.txt`, `*requirements*.in`, constraints.

Each logical line (pip joins `\\`-continued lines) is a requirement, an option or a comment.
Requirements go through the shared requirement policy (porter/requirement_policy.py);
index options (`-i`, `--extra-index-url`, `-f`) are checked for CUDA wheel indexes;
`-r`/`-c`/`-e` lines and comments are left alone. A dropped requirement is commented out
with porter's code and reason, so the line stays visible and recoverable.

Also here: `text_found`, the pipeline the packaging and container file types share (on
top of porter/filetypes/_common.py): a file that is not what its name says is skipped; and
`packaging_found`, the pipeline of the packaging files (requirements, pyproject.toml,
setup.cfg) over their tables of matchers, whose one kind so far is requirement-string.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from porter.core.edits import Found
from porter.core.model import Finding, Skipped
from porter.filetypes._common import TextFile, matched, open_text
from porter.rules import ActiveRules, Rule
from porter.tables.requirement_policy import RequirementPolicy, Verdict, requirement_findings
from porter.core.textio import LineIndex
from porter.rules.kinds import REQUIREMENT_STRING, Matcher, RequirementStringParams

# pip's own comment rule: `#` at the start of a line or after whitespace.
_COMMENT = re.compile(r"(^|\s+)#.*$")
_URL_OPTIONS = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links"}
_EDITABLE = {"-e", "--editable"}  # its value is a location (`-e .[bitsandbytes]`), reviewed as one
# pip options that take a value (requirements files and `pip install` share the syntax).
_VALUE_OPTIONS = _URL_OPTIONS | {
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-e",
    "--editable",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--trusted-host",
    "-C",
    "--config-settings",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--src",
    "--upgrade-strategy",
    "--cache-dir",
    "--log",
    "--proxy",
    "--retries",
    "--timeout",
    "--no-binary",
    "--only-binary",
    "--progress-bar",
    "--exists-action",
    "--cert",
    "--client-cert",
    "--global-option",
}
_OPTION_START = re.compile(r"\s+(?=--?[A-Za-z])")
# A URL or a local path (`.`, `./wheels/x.whl`, `/abs`): pip installs it as it is.
_LOCATION = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|file:|\.|/|~)", re.IGNORECASE)
# Extras after a location: `.[bitsandbytes,deepspeed]`, `./pkg[vllm]`.
_LOCATION_EXTRAS = re.compile(r"^(.*?)\[([^\[\]]*)\]$")
_PIP = re.compile(r"pip[\d.]*")


class BrokenFile(ValueError):
    """The file is not what its name says (invalid TOML, broken YAML): copied, reported."""


def text_found(
    path: str, data: bytes, kind: str, find: Callable[[str], list[Finding]], verify: Callable[[str], None] | None = None
) -> Found | Skipped | None:
    """Decode the text and run `find` on it (porter/filetypes/_common.py).

    Never raises for bad input: binary or undecodable data and a `BrokenFile` from `find`
    give `Skipped` (the file is copied as it is). `verify` may raise BrokenFile on the new
    text, which then leaves the file unchanged and says why.
    """
    file = open_text(path, data, f"a {kind} file")
    if not isinstance(file, TextFile):
        return file
    try:
        findings = find(file.text)
    except BrokenFile as exc:
        return Skipped(f"{exc}; copied unchanged")
    return file.found(findings, _problem_of(verify) if verify else None)


@dataclass(frozen=True)
class PackagingView:
    """A packaging file as its kinds read it: its path and text, and the requirement policy
    (built once per file from the run's rules) its requirements go through."""

    path: str
    text: str
    policy: RequirementPolicy


def packaging_found(
    path: str,
    data: bytes,
    rules: ActiveRules,
    kind: str,
    table: Sequence[Matcher[PackagingView]],
    verify: Callable[[str], None] | None = None,
) -> Found | Skipped | None:
    """`text_found` over a packaging file type's table of matchers; None, before the file is
    even decoded, without an active requirement rule (the kind every packaging file's
    requirements go through)."""
    policy = RequirementPolicy.build(rules.rules, rules.version)
    if policy is None:
        return None
    return text_found(path, data, kind, lambda text: matched(table, PackagingView(path, text, policy), rules), verify)


def _problem_of(verify: Callable[[str], None]) -> Callable[[str], str | None]:
    """`verify` (raises BrokenFile) as the engine's check (returns the problem)."""

    def problem(text: str) -> str | None:
        try:
            verify(text)
        except BrokenFile as exc:
            return str(exc)
        return None

    return problem


def logical_lines(index: LineIndex) -> list[tuple[int, int, str]]:
    """(first line, last line, content of the first line without comment) for each logical line."""
    out = []
    number, total = 1, len(index.starts)
    while number <= total:
        first = number
        line = index.line_text(number)
        # pip: a comment line never continues, whatever it ends with.
        while line.endswith("\\") and not line.lstrip().startswith("#") and number < total:
            number += 1
            line = index.line_text(number)
        content = index.line_text(first)
        if number > first:
            content = content[:-1]
        out.append((first, number, _COMMENT.sub("", content)))
        number += 1
    return out


def requirement_lines_findings(policy: RequirementPolicy, path: str, index: LineIndex) -> list[Finding]:
    """Findings for every logical line of a requirements file."""
    lines = [(first, last, content) for first, last, content in logical_lines(index) if content.strip()]
    if any(policy.is_cuda_index(url) for *_, content in lines for url in index_urls(content.split())):
        policy = policy.from_cuda_index()  # the file's requirements come from a CUDA index
    findings: list[Finding] = []
    for first, last, content in lines:
        start = index.starts[first - 1] + len(content) - len(content.lstrip())
        findings += requirement_line_findings(policy, path, index, start, content.strip(), (first, last))
    return findings


def requirement_line_findings(
    policy: RequirementPolicy, path: str, index: LineIndex, start: int, line: str, lines: tuple[int, int] | None
) -> list[Finding]:
    """Findings for one requirements line (`line`, stripped and without its comment, starts at
    offset `start`): a requirement, a location or options. `lines` are the physical lines that
    hold only it, where a dropped requirement is commented out. Requirements files and the
    `pip:` list of a conda environment file share it."""
    if line.startswith("-"):  # -r / -c are kept; index options and -e locations are checked
        verdicts = [v for _, found in pip_argument_verdicts(policy, line.split()) for v in found]
        return requirement_findings(policy, path, index, start, start + len(line), None, verdicts)
    if _LOCATION.match(line):
        verdicts = argument_verdicts(policy, line)
        return requirement_findings(policy, path, index, start, start + len(line), lines, verdicts)
    requirement = _OPTION_START.split(line, maxsplit=1)[0]
    return requirement_findings(policy, path, index, start, start + len(requirement), lines)


def argument_verdicts(policy: RequirementPolicy, spec: str) -> list[Verdict]:
    """Verdicts (never editable in place) on what pip installs: a wheel, a URL, a path, a requirement."""
    if spec.split("#", 1)[0].endswith(".whl"):
        return policy.review_wheel(spec)
    if _LOCATION.match(spec):
        location, extras = spec, ""
        with_extras = _LOCATION_EXTRAS.match(spec)
        if with_extras:
            location, extras = with_extras.groups()
        # A URL: a CUDA index or wheel, or a distribution's own repository; a path: the project itself, a local folder.
        verdicts = policy.review_url(location) + policy.review_source(location) if "://" in location else []
        return verdicts + policy.review_extras(location, [e for e in extras.split(",") if e.strip()])
    return policy.review(spec, editable=False)


def pip_install_start(values: Sequence[str | None]) -> int | None:
    """Where the arguments of `pip install` (`python -m pip install`, `uv pip install`, `pip3.11
    install`) begin among a command's words, given as plain values (None for a word that is
    not literal); None when the command installs nothing with pip. Dockerfile RUN lines and
    shell scripts both read their commands with it."""
    for i, value in enumerate(values[:-1]):
        if _PIP.fullmatch(posixpath.basename(value or "")) and values[i + 1] == "install":
            return i + 2
    return None


def index_urls(words: list[str]) -> list[str]:
    """The values of the index options among pip's arguments (`-i URL`, `--extra-index-url=URL`)."""
    urls = []
    for i, word in enumerate(words):
        option, eq, value = word.partition("=")
        if option in _URL_OPTIONS:
            value = value if eq else (words[i + 1] if i + 1 < len(words) else "")
            if value:
                urls.append(value)
    return urls


def pip_argument_verdicts(
    policy: RequirementPolicy, words: list[str], resolve: Callable[[str], str | None] = lambda w: w
) -> list[tuple[str, list[Verdict]]]:
    """(word as written, verdicts) for pip's arguments: index URLs and what is installed.

    `resolve` expands variables (a Dockerfile's ARG defaults); a word it cannot resolve
    is skipped. Requirement files named by -r/-c are converted as files of their own. What a
    command installs from a CUDA index is reviewed as such (torchvision is then an error).
    """
    cuda_index = any(policy.is_cuda_index(url) for url in map(resolve, index_urls(words)) if url)
    if cuda_index:
        policy = policy.from_cuda_index()
    out = []
    i = 0
    while i < len(words):
        word = words[i]
        option, eq, value = word.partition("=")
        if word.startswith("-"):
            if option in _VALUE_OPTIONS and not eq:
                i += 1
                value = words[i] if i < len(words) else ""
            resolved = resolve(value) if option in _URL_OPTIONS | _EDITABLE and value else None
            if resolved:
                out.append(
                    (
                        value,
                        policy.review_url(resolved) if option in _URL_OPTIONS else argument_verdicts(policy, resolved),
                    )
                )
        else:
            resolved = resolve(word)
            if resolved:
                out.append((word, argument_verdicts(policy, resolved)))
        i += 1
    return _torch_from_the_index(policy, out) if cuda_index else out


# What a requirement rule says of a torch-family release (a pin the target line excludes or
# admits, a build that must be the target's): the CUDA index it comes from is part of that.
_RELEASE_OUTCOMES = ("releases-excluded", "releases-admitted", "vendor-build")


def _torch_from_the_index(
    policy: RequirementPolicy, out: list[tuple[str, list[Verdict]]]
) -> list[tuple[str, list[Verdict]]]:
    """One command that installs torch (or torchvision, torchaudio) from a CUDA wheel index
    at a release the target line cannot use, or a build that must be the target's, is one
    decision, where that torch comes from: the index is named in the first such finding, with
    what to do about it, and not reported again (LLaMA-Factory's `pip install torch==2.8.0
    ... --index-url .../cu129` had PRT421 and PRT414, a torchvision from it PRT418 and PRT414).
    An index that serves nothing else reported (an unpinned torch) stays its own finding."""
    urls = [v.subject for _, verdicts in out for v in verdicts if RequirementStringParams.of(v.rule).on == "index-url"]
    torch = [
        v
        for _, verdicts in out
        for v in verdicts
        if RequirementStringParams.of(v.rule).on in _RELEASE_OUTCOMES and policy.built_for_cuda(v.subject)
    ]
    if not urls or not torch:
        return out
    # Said once, with the first of them (the family on one line is one finding, once_per_line).
    first = torch[0]
    named = {
        id(first): replace(
            first,
            message=f"{first.message} It comes from the CUDA wheel index {urls[0]}.",
            suggestion=f"{policy.rules['index-url'].suggestion} {first.suggestion or ''}".strip(),
        )
    }
    return [
        (word, [named.get(id(v), v) for v in verdicts if RequirementStringParams.of(v.rule).on != "index-url"])
        for word, verdicts in out
    ]


def requirements_file_findings(view: PackagingView, rules: list[Rule]) -> list[Finding]:
    """Every logical line of a requirements file, as pip reads it."""
    return requirement_lines_findings(view.policy, view.path, LineIndex(view.text))


# The kinds a requirements file is matched with (porter/rules/kinds.py's Matcher), in the order
# their findings are listed: adding a kind is its matcher and a line.
REQUIREMENTS_KINDS: tuple[Matcher[PackagingView], ...] = (Matcher(REQUIREMENT_STRING, requirements_file_findings),)


def find_requirements(path: str, data: bytes, rules: ActiveRules) -> Found | Skipped | None:
    """Findings (with edits) for one requirements file (never raises for bad input)."""
    return packaging_found(path, data, rules, "requirements", REQUIREMENTS_KINDS)
