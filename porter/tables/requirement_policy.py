"""What happens to one requirement on a target: the one answer every packaging file shares.

requirements files, pyproject.toml, setup.cfg, setup.py and Dockerfile `pip install` lines
all ask here. A requirement string is parsed (the common forms by plain_requirement.py, any
other by the `packaging` library), its distribution is looked
up in the package table (op_tables/<target>/packages.toml, the only place that knows what
runs where), and the active `requirement-string` rules, one per outcome (`on`), say what
porter reports. Spans in a verdict are offsets into the requirement string, so each file
type maps them onto its own text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from urllib.parse import unquote

from porter.core.model import Edit, Finding, Severity
from porter.rules.kinds import REQUIREMENT_OUTCOMES, REQUIREMENT_STRING
from porter.rules.terms import TARGET_NAMES
from porter.tables.packages import PackageEntry, PackageTable, load_package_table
from porter.tables.plain_requirement import PlainRequirement, parse_plain, plain_wheel
from porter.rules import Rule
from porter.core.textio import LineIndex
from porter.rules.kinds import RequirementStringParams

if TYPE_CHECKING:  # packaging is imported where a requirement is parsed (start-up time)
    from packaging.requirements import Requirement


KIND = REQUIREMENT_STRING
# What a `requirement-string` rule's `on` may say: the table's actions, and the three
# things porter checks itself (a +cuXXX pin, a CUDA wheel index, a line it cannot parse).
OUTCOMES = REQUIREMENT_OUTCOMES

_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
# A local version label of a CUDA build: +cu121, +cu12torch2.6cxx11abiFALSE, ...
_CUDA_LOCAL = re.compile(r"\+(cu\d[0-9A-Za-z.]*)", re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    """One thing a rule says about a requirement, with the exact new text when there is one."""

    rule: Rule
    severity: Severity
    message: str
    suggestion: str | None = None
    span: tuple[int, int] | None = None  # part of the requirement string to replace
    replacement: str | None = None  # None: a finding only
    drop: bool = False  # the whole requirement should go (commented out where that is safe)
    subject: str | None = None  # the distribution or URL, for reports


@dataclass(frozen=True)
class RequirementPolicy:
    """The package table of a target and its active requirement rules, keyed by `on`."""

    table: PackageTable
    rules: dict[str, Rule]
    # What is installed with it comes from a CUDA index (a `--index-url .../cu121` of the
    # same file or command): a distribution that needs the target's build is then an error.
    cuda_index: bool = False
    # The target line (--target-version) whose releases a pin is checked against.
    line: str | None = None

    def from_cuda_index(self) -> RequirementPolicy:
        """The same policy for requirements installed from a CUDA wheel index."""
        return replace(self, cuda_index=True)

    def built_for_cuda(self, name: str | None) -> bool:
        """Whether a CUDA wheel index builds `name` for CUDA, where the target has a build of
        its own (torch, torchvision, torchaudio: the table strips their +cuXXX label)."""
        entry = self.table.by_distribution(name) if name else None
        return entry is not None and entry.strip_local_version

    def is_cuda_index(self, url: str) -> bool:
        """Whether `url` is a CUDA wheel index or wheel (the `index-url` rule's patterns)."""
        rule = self.rules.get("index-url")
        return rule is not None and any(re.search(p, url) for p in RequirementStringParams.of(rule).url_patterns)

    @classmethod
    def build(cls, rules: Sequence[Rule], line: str | None = None) -> RequirementPolicy | None:
        """A policy from (active) rules of any kind, for one target line (--target-version);
        None when no requirement rule is active."""
        mine = [r for r in rules if r.kind == KIND]
        if not mine:
            return None
        by_outcome: dict[str, Rule] = {}
        for rule in mine:
            by_outcome.setdefault(RequirementStringParams.of(rule).on, rule)  # a valid outcome: checked at load
        return cls(load_package_table(mine[0].target).for_line(line), by_outcome, line=line)

    def review(self, text: str, editable: bool = True) -> list[Verdict]:
        """Verdicts on one PEP 508 string; spans (when `editable`) index into `text`."""
        req: PlainRequirement | Requirement | None = parse_plain(text)  # the common forms, without packaging
        if req is None:
            from packaging.requirements import InvalidRequirement, Requirement  # ~20 ms to load: only when needed

            try:
                req = Requirement(text.strip())
            except InvalidRequirement as exc:
                rule = self.rules.get("unparsed")
                if rule is None:
                    return []
                problem = str(exc).splitlines()[0]
                message = f"not a requirement porter can read ({problem}); kept as it is"
                return [Verdict(rule, rule.severity, message, rule.suggestion, subject=text.strip())]
        entry = self.table.by_distribution(req.name)
        cuda_pin = any(_CUDA_LOCAL.search(s.version) for s in req.specifier)
        releases = self._release_verdicts(req, entry)
        if releases:
            # One requirement, one decision: the release to use. The table's own advice about
            # the distribution (a vendor build, a kernel build, a caveat) is in its message.
            verdicts = []
        else:
            verdicts = self._table_verdicts(
                req.name, entry, text if editable else None, req.specifier, cuda_pin, req.url
            )
        if any(v.drop for v in verdicts):
            return verdicts
        verdicts += releases
        verdicts += self._local_version(req, entry, text if editable else None)
        if req.url:
            verdicts += self.review_url(req.url)
        return verdicts + self.review_extras(req.name, sorted(req.extras))

    def review_extras(self, owner: str, extras: Iterable[str]) -> list[Verdict]:
        """Verdicts on extras named like a distribution the table does not keep:
        `.[bitsandbytes]` or `accelerate[deepspeed]` install it along with `owner`."""
        rule = self.rules.get("extra")
        if rule is None:
            return []
        out = []
        for extra in extras:
            entry = self.table.by_distribution(extra.strip())
            if entry is None or entry.action == "keep":
                continue
            target = f" ({entry.replacement} on this target)" if entry.replacement else ""
            message = f"{owner}[{extra.strip()}]: the extra installs {entry.name}{target}: {entry.reason}"
            out.append(
                Verdict(
                    rule,
                    rule.severity,
                    message,
                    entry.suggestion or rule.suggestion,
                    subject=f"{owner}[{extra.strip()}]",
                )
            )
        return out

    def review_wheel(self, location: str) -> list[Verdict]:
        """Verdicts on a wheel file named by a path or URL (never editable in place)."""
        filename = unquote(location.rsplit("/", 1)[-1])
        plain = plain_wheel(filename)
        if plain is not None:
            name, version = plain
        else:
            from packaging.utils import InvalidWheelFilename, parse_wheel_filename

            try:
                name, version, _, _ = parse_wheel_filename(filename)
            except InvalidWheelFilename:
                return []
        return self.review(f"{name}=={version}", editable=False) + self.review_url(location)

    def review_source(self, url: str) -> list[Verdict]:
        """Verdicts on a distribution built from its source repository (`pip install
        git+https://github.com/NVIDIA/apex`, `git clone` of it): those of the distribution."""
        entry = self.table.by_repository(url)
        if entry is None:
            return []
        return [
            replace(v, message=f"{v.message} (built from its source, {url})")
            for v in self.review(entry.name, editable=False)
        ]

    def review_url(self, url: str) -> list[Verdict]:
        """A finding when `url` is a CUDA wheel index or a CUDA wheel's address."""
        if not self.is_cuda_index(url):
            return []
        rule = self.rules["index-url"]
        return [Verdict(rule, rule.severity, f"CUDA wheel index or wheel: {url}", rule.suggestion, subject=url)]

    def _vendor_build(self, name: str, entry: PackageEntry, cuda_pin: bool) -> list[Verdict]:
        """The distribution must be the target's build: an error when this line pins a CUDA one."""
        rule = self.rules["vendor-build"]
        message = f"{name}: {entry.reason}"
        suggestion = entry.suggestion or rule.suggestion
        release = entry.releases(self.line)
        if release and release.startswith("==") and self.line:
            # The advice follows the selected line: the exact release that pairs with its torch.
            pair = f"{entry.name}{release}"
            message += f" On the torch {self.line} line that is {pair}."
            suggestion = (
                f"pip install {pair} --index-url https://download.pytorch.org/whl/cpu --no-deps "
                f"(the build that pairs with the line's torch; porter_report's constraints file pins it)."
            )
        severity: Severity = rule.severity
        if cuda_pin or self.cuda_index:
            severity = "error"
            how = "a +cuXXX pin" if cuda_pin else "from a CUDA wheel index, or with pytorch-cuda"
            message += f" This line installs the CUDA build ({how})."
        return [Verdict(rule, severity, message, suggestion, subject=name)]

    def _table_verdicts(
        self,
        name: str,
        entry: PackageEntry | None,
        text: str | None,
        specifier: Iterable = (),
        cuda_pin: bool = False,
        url: str | None = None,
    ) -> list[Verdict]:
        if entry is None:
            return []
        if entry.vendor_build and "vendor-build" in self.rules:
            return self._vendor_build(name, entry, cuda_pin)
        on = "note" if entry.action == "keep" else entry.action
        rule = self.rules.get(on)
        if rule is None or (on == "note" and not entry.suggestion):
            return []
        if on == "drop":
            return [Verdict(rule, entry.severity, f"{name}: {entry.reason}", entry.suggestion, drop=True, subject=name)]
        if on == "replace" and url:
            # `deepspeed @ git+https://.../DeeperSpeed.git`: the URL builds a distribution of its own
            # (a fork), whose name pip checks against the one written: renamed, the line fails.
            message = (
                f"{name} @ {url}: a direct reference (a fork or a build of its own), not renamed to "
                f"{entry.replacement}, which that URL does not build: {entry.reason}"
            )
            return [
                Verdict(
                    rule,
                    entry.severity,
                    message,
                    f"Replace the line with {entry.replacement} from the vendor, or port the fork itself.",
                    subject=name,
                )
            ]
        if on == "replace":
            match = _NAME.match(text) if text is not None else None
            span = match.span(1) if match else None
            message = f"{name} -> {entry.replacement}: {entry.reason}"
            pins = ",".join(str(s) for s in specifier)
            if pins:
                # A pin carried to another distribution names the vendor's release, not upstream's.
                message += (
                    f" The pin {pins} is carried over: {entry.replacement} follows the vendor's releases,"
                    f" so check that {entry.replacement}{pins} exists and matches the rest of the vendor's stack."
                )
            new = entry.replacement if span else None
            return [Verdict(rule, entry.severity, message, entry.suggestion, span, new, subject=name)]
        return [Verdict(rule, entry.severity, f"{name}: {entry.reason}", entry.suggestion, subject=name)]

    def _release_verdicts(self, req: PlainRequirement | Requirement, entry: PackageEntry | None) -> list[Verdict]:
        """A pin against the releases that work on the target line (the table's `releases`):
        one that excludes them all is the `releases-excluded` outcome; a floor below them the
        `releases-admitted` one, where working means a floor (a distribution the vendor builds
        at one release, torch, is installed by the vendor: a range that holds it keeps it)."""
        working = entry.releases(self.line) if entry is not None else None
        # A +cuXXX label is the local-version rule's business; the release is what counts here.
        written = without_local_labels(",".join(str(s) for s in req.specifier))
        if working is None or not written or entry is None or entry.action in ("drop", "replace"):
            return []
        check = releases_check(written, working)
        if check is None:
            return []
        outcome, suggested = check
        rule = self.rules.get(outcome)
        if rule is None:
            return []
        where = TARGET_NAMES.get(self.table.target, self.table.target) + (
            f" (the torch {self.line} line)" if self.line and self.line != "any" else ""
        )
        if outcome == "releases-excluded":
            message = (
                f"{req.name}{written} excludes every release that works on {where}, {req.name}{working}: "
                f"{entry.releases_why}"
            )
            if entry.action == "flag":
                message += f" {entry.reason}"
            suggestion = f"Require {req.name}{suggested}{self._other_lines(entry, written)}."
        else:
            message = (
                f"{req.name}{written} admits older releases that do not work on {where}, which needs "
                f"{req.name}{working}: {entry.releases_why}"
            )
            if entry.action == "flag":
                message += f" {entry.reason}"
            suggestion = f"Raise the floor: {req.name}{suggested}."
        return [Verdict(rule, rule.severity, message, suggestion, subject=req.name)]

    def _other_lines(self, entry: PackageEntry, written: str) -> str:
        """`, or convert for --target-version 2.1` when another line's releases fit the pin."""
        fits = [
            line for line, spec in entry.releases_by_line if line != self.line and releases_check(written, spec) is None
        ]
        return f" (or port for the line that has it: --target-version {' or '.join(fits)})" if fits else ""

    def _local_version(
        self, req: PlainRequirement | Requirement, entry: PackageEntry | None, text: str | None
    ) -> list[Verdict]:
        rule = self.rules.get("local-version")
        found = [m for s in req.specifier if (m := _CUDA_LOCAL.search(s.version))]
        if rule is None or not found:
            return []
        label = found[0].group(0)
        message = f"{req.name}: {label} pins a CUDA build"
        if text is None or entry is None or not entry.strip_local_version:
            return [Verdict(rule, rule.severity, message, rule.suggestion, subject=req.name)]
        out = []
        head = text.split(";", 1)[0]  # markers never hold a local version
        for match in _CUDA_LOCAL.finditer(head):
            out.append(
                Verdict(rule, rule.severity, f"{message}; removed", rule.suggestion, match.span(), "", subject=req.name)
            )
        return out


# A local version label (+cu121, +cpu, +rocm6.2): a build of a release, not another release.
_LOCAL_LABEL = re.compile(r"\+[0-9A-Za-z.]+")


def without_local_labels(specifier: str) -> str:
    """The specifier with its local labels removed: releases are what the target's table bounds."""
    return _LOCAL_LABEL.sub("", specifier)


def releases_check(written: str, working: str) -> tuple[str, str] | None:
    """How a written specifier meets the working one: ("releases-excluded", what to require)
    when no working release satisfies it, ("releases-admitted", the raised range) when it
    admits releases below a working floor, None when it is fine. Release numbers are probed
    at the bounds both specifiers name (no list of published releases is needed)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        mine, works = SpecifierSet(written), SpecifierSet(working)
        probes = sorted({v for spec in (*mine, *works) for v in _probes(Version(spec.version.removesuffix(".*")))})
    except (InvalidSpecifier, InvalidVersion):
        return None
    if not any(v in mine and v in works for v in probes):
        return "releases-excluded", working
    pinned = any(spec.operator in ("==", "===") for spec in works)
    floor = any(spec.operator in (">=", ">", "~=", "==", "===") for spec in mine)  # no floor: pip takes the newest
    if (
        pinned
        or not floor
        or not any(v in mine and v not in works for v in probes if v < min(Version(s.version) for s in works))
    ):
        return None
    return "releases-admitted", merged_range(mine, works)


def merged_range(mine, works) -> str:
    """The working range narrowed by the written one: the higher floor, every cap and exclusion
    of both (SpecifierSets; a floor of `mine` below the working one is dropped)."""
    from packaging.version import Version

    floors = [s for s in (*works, *mine) if s.operator in (">=", ">", "~=", "==", "===")]
    top = max(floors, key=lambda s: Version(s.version.removesuffix(".*")), default=None)
    uppers = [s for s in (*mine, *works) if s.operator in ("<", "<=")]
    cap = min(uppers, key=lambda s: (Version(s.version), s.operator == "<="), default=None)
    caps = ([cap] if cap is not None else []) + [s for s in (*mine, *works) if s.operator == "!="]
    seen: list[str] = []
    for spec in ([top] if top is not None else []) + caps:
        if str(spec) not in seen:
            seen.append(str(spec))
    return ",".join(seen)


def _probes(version):
    """Releases around one bound: itself, a patch and a minor above and below, and 0."""
    from packaging.version import Version

    major, minor, patch = (list(version.release) + [0, 0])[:3]
    around = [
        (major, minor, patch),
        (major, minor, patch + 1),
        (major, minor + 1, 0),
        (major, max(minor - 1, 0), 0),
        (major, minor, max(patch - 1, 0)),
        (max(major - 1, 0), 0, 0),
        (0, 0, 0),
        (major + 1, 0, 0),
    ]
    return {version, *(Version(".".join(map(str, r))) for r in around)}


def drop_prefix(verdict: Verdict) -> str:
    """The comment put in front of a dropped requirement: `# porter PRT410: <reason>: `.

    The reason never contains ": ", so the original line is always what follows the
    second ": " (and removing the prefix gives it back exactly).
    """
    reason = verdict.message.split(": ", 1)[-1].rstrip(". ").replace(": ", " - ").replace("\n", " ")
    return f"# porter {verdict.rule.code}: {reason}: "


def requirement_findings(
    policy: RequirementPolicy,
    path: str,
    index: LineIndex,
    start: int,
    end: int,
    drop_lines: tuple[int, int] | None,
    verdicts: list[Verdict] | None = None,
) -> list[Finding]:
    """Findings (with edits where exact) for the requirement at text[start:end].

    `drop_lines` (first, last; 1-based) are the physical lines that hold nothing but this
    requirement: a dropped requirement is commented out there, line by line; without them
    it is reported for a manual change. `verdicts` overrides the review of text[start:end]
    (a wheel file name, a requirement porter must not edit in place).
    """
    findings = []
    line, col = index.line_col(start)
    if verdicts is None:
        verdicts = policy.review(index.text[start:end])
    for verdict in verdicts:
        base = Finding(
            rule=verdict.rule.code,
            severity=verdict.severity,
            path=path,
            line=line,
            col=col,
            message=verdict.message,
            suggestion=verdict.suggestion,
            subject=verdict.subject,
        )
        if verdict.drop and drop_lines:
            prefix = drop_prefix(verdict)
            for number in range(drop_lines[0], drop_lines[1] + 1):
                at = index.starts[number - 1] + _indent(index.line_text(number))
                findings.append(
                    replace(base, line=number, col=index.line_col(at)[1], edit=Edit(verdict.rule.code, at, at, prefix))
                )
        elif verdict.span is not None and verdict.replacement is not None:
            a, b = start + verdict.span[0], start + verdict.span[1]
            findings.append(
                replace(base, col=index.line_col(a)[1], edit=Edit(verdict.rule.code, a, b, verdict.replacement))
            )
        else:
            manual = " (porter cannot comment it out safely here: remove it by hand)" if verdict.drop else ""
            findings.append(replace(base, message=verdict.message + manual))
    return findings


def alone_on_lines(index: LineIndex, start: int, end: int, comment: str = "#") -> tuple[int, int] | None:
    """The lines of text[start:end] when nothing but it (a comma, a comment) is on them."""
    first, col = index.line_col(start)
    last, end_col = index.line_col(end)
    before = index.line_text(first)[: col - 1]
    after = index.line_text(last)[end_col - 1 :]
    if before.strip() or not re.fullmatch(rf"\s*,?\s*(?:{re.escape(comment)}.*)?", after):
        return None
    return first, last


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))
