"""Which rules a run applies: the target version and the --select / --ignore code prefixes.

`Selection` is what a run was asked for; `ActiveRules` is that selection applied to one rule
set, computed once and handed to every pipeline (instead of each recomputing it from loose
version/select/ignore arguments).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

from porter.rules.kinds import KINDS, ConfigKeyParams
from porter.rules.model import Rule, RuleSet

# How far a rule's reports fold across files (porter/engine/folding.py): within a folder, the
# tree, or the tree per subject (one finding per library or setting, naming the other files);
# FOLD_SUBJECT_ALL folds errors too (a rule's `once_per_subject_in_tree = "errors-too"`).
FOLD_FOLDER, FOLD_TREE, FOLD_SUBJECT, FOLD_SUBJECT_ALL = "folder", "tree", "subject", "subject+errors"


@dataclass(frozen=True)
class Selection:
    """What the user chose: a torch_mlu line and code prefixes to keep or drop."""

    version: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    # Only rules of these kinds (empty: every kind); e.g. the op scan alone, which convert
    # adds to its report after its own rules have run.
    kinds: tuple[str, ...] = ()
    # Added to `select` (or, when select is empty, to the default: every rule but the opt-in ones).
    extend: tuple[str, ...] = ()

    def names(self, code: str) -> bool:
        """Whether --select / --extend-select name this code (or a prefix of it; ALL names
        every code): an informational finding is shown only then, as ruff keeps rules outside
        its default set until selected."""
        return any(code.startswith("PRT" if p == "ALL" else p) for p in self.select + self.extend)

    def wants(self, rule: Rule) -> bool:
        """Whether the rule runs. An `opt_in` rule (unknown APIs on HIP, where nearly everything
        is unknown) runs only when --select names its full code."""
        if self.version and rule.versions and self.version not in rule.versions:
            return False
        select = tuple("PRT" if c == "ALL" else c for c in self.select)
        extended = bool(self.extend) and rule.code.startswith(tuple("PRT" if c == "ALL" else c for c in self.extend))
        if self.select and not rule.code.startswith(select) and not extended:
            return False
        if self.ignore and rule.code.startswith(self.ignore):
            return False
        if self.kinds and rule.kind not in self.kinds:
            return False
        named = self.select + self.extend
        return not (rule.params.reporting.opt_in and rule.code not in named and "ALL" not in named)

    @property
    def key(self) -> str:
        """A text that differs whenever the selection does (part of cache keys)."""
        return f"{self.version}|{','.join(self.select)}|{','.join(self.ignore)}|{','.join(self.kinds)}" + (
            f"|{','.join(self.extend)}" if self.extend else ""
        )


@dataclass(frozen=True, eq=False)
class ActiveRules:
    """A rule set with a selection applied: the rules that run, grouped by kind."""

    ruleset: RuleSet
    selection: Selection = field(default_factory=Selection)
    # Codes the project itself makes moot: its pins guarantee what the rule warns about (an
    # `unless_pinned` rule; the tree runner decides with porter/filetypes/pins.py).
    project_off: frozenset[str] = frozenset()
    # Top-level modules the tree itself provides (GPT-NeoX's own megatron/): an import of one is
    # the project's code, not the library of that name (porter/engine/own_modules.py decides).
    own_modules: frozenset[str] = frozenset()
    # (module, literal) pairs the tree keeps as named constants (`nanotron.logging.timers`,
    # "cuda"): a literal handed to that module is kept too (porter/engine/kept_constants.py).
    kept_constants: frozenset[tuple[str, str]] = frozenset()
    # Distributions the project's own requirements name, among those a rule words itself by
    # (`words_when_required`: ChatGLM's quantization_bit runs cpm_kernels, not bitsandbytes).
    project_requires: frozenset[str] = frozenset()

    def _identity(self) -> tuple:
        return (
            self.ruleset,
            self.selection,
            self.project_off,
            self.own_modules,
            self.kept_constants,
            self.project_requires,
        )

    def __hash__(self) -> int:
        return hash(self._identity())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ActiveRules) and self._identity() == other._identity()

    @property
    def key(self) -> str:
        """A text that differs whenever the rules that run do, or what they see of the tree
        beyond the file (part of cache keys)."""
        off = f"|off:{','.join(sorted(self.project_off))}" if self.project_off else ""
        own = f"|own:{','.join(sorted(self.own_modules))}" if self.own_modules else ""
        kept = f"|kept:{','.join(sorted(f'{m}={v}' for m, v in self.kept_constants))}" if self.kept_constants else ""
        requires = f"|requires:{','.join(sorted(self.project_requires))}" if self.project_requires else ""
        return f"{self.ruleset.digest}|{self.selection.key}{off}{own}{kept}{requires}"

    @property
    def target(self) -> str:
        return self.ruleset.target

    @property
    def version(self) -> str | None:
        return self.selection.version

    def shows(self, finding) -> bool:
        """Whether a finding is reported: edits always; an `info` finding (a note, nothing to
        do) only when its code is selected by name, so the default set holds only findings
        that ask the user to act."""
        return finding.edit is not None or finding.severity != "info" or self.selection.names(finding.rule)

    @cached_property
    def rules(self) -> tuple[Rule, ...]:
        return tuple(
            self._worded(r)
            for r in self.ruleset.rules
            if self.selection.wants(r) and r.code not in self.project_off and not self._unseen(r)
        )

    def _worded(self, rule: Rule) -> Rule:
        """The rule in the words its `words_when_required` gives for a distribution the project
        requires (its summary, message or suggestion), else as it is."""
        if not isinstance(rule.params, ConfigKeyParams):
            return rule
        for distribution, words in rule.params.words_when_required.items():
            if distribution in self.project_requires:
                return replace(
                    rule,
                    summary=words.get("summary", rule.summary),
                    message=words.get("message", rule.message),
                    suggestion=words.get("suggestion", rule.suggestion),
                )
        return rule

    def _unseen(self, rule: Rule) -> bool:
        """Whether nothing the rule finds could be shown (`shows`): an `info` rule of a kind whose
        findings keep the rule's severity, with no edit to make, and not selected by name. Not
        applying it saves the work (a YAML parser for every config that sets bf16); its
        suppression comments are not judged unused, as for any rule the run does not apply."""
        schema = KINDS.get(rule.kind)
        return (
            rule.severity == "info"
            and schema is not None
            and schema.fixed_severity
            and not rule.params.rewrites()
            and not self.selection.names(rule.code)
        )

    @cached_property
    def _by_kind(self) -> dict[str, list[Rule]]:
        out: dict[str, list[Rule]] = {}
        for rule in self.rules:
            out.setdefault(rule.kind, []).append(rule)
        return out

    @cached_property
    def codes(self) -> frozenset[str]:
        return frozenset(r.code for r in self.rules)

    @cached_property
    def once_per_file(self) -> frozenset[str]:
        """Codes whose findings in one file are one thing to act on (a rule's `once_per_file`)."""
        return frozenset(r.code for r in self.rules if r.params.reporting.once_per_file)

    @cached_property
    def fold_scopes(self) -> dict[str, str]:
        """Codes whose equal findings across files are one thing to act on, and how far:
        "folder" (a rule's `once_per_folder`: the same variable exported by every launch script
        there), "tree" (`once_per_tree`: advice about the environment, not the file) or
        "subject" (`once_per_subject_in_tree`: megatron.core imported by 20 modules is one
        decision about Megatron; "errors-too" folds its errors as well)."""
        scopes = {}
        for r in self.rules:
            per_subject = r.params.reporting.once_per_subject_in_tree
            if per_subject:
                scopes[r.code] = FOLD_SUBJECT_ALL if per_subject == "errors-too" else FOLD_SUBJECT
            elif r.params.reporting.once_per_tree:
                scopes[r.code] = FOLD_TREE
            elif r.params.reporting.once_per_folder:
                scopes[r.code] = FOLD_FOLDER
        return scopes

    @cached_property
    def once_per_line(self) -> frozenset[str]:
        """Codes whose findings on one line are one thing to act on (a rule's `once_per_line`:
        the torch family in one install command)."""
        return frozenset(r.code for r in self.rules if r.params.reporting.once_per_line)

    @cached_property
    def once_per_subject(self) -> frozenset[str]:
        """Codes whose reports of one subject in one file are one thing to act on (a rule's
        `once_per_subject`: a shell variable set on several lines)."""
        return frozenset(r.code for r in self.rules if r.params.reporting.once_per_subject)

    @cached_property
    def notes_in_tests(self) -> frozenset[str]:
        """Codes whose findings inside a test function are notes (a rule's `note_in_tests`)."""
        return frozenset(r.code for r in self.rules if r.params.reporting.note_in_tests)

    @cached_property
    def covered_by(self) -> dict[str, str]:
        """Code -> the code of the rule that reports the call its argument is given in (a
        keyword-value or string-literal rule's `covered_by`), where both are active."""
        return {
            r.code: r.params.reporting.covered_by
            for r in self.rules
            if r.params.reporting.covered_by is not None and r.params.reporting.covered_by in self.codes
        }

    @cached_property
    def decisions(self) -> dict[str, str]:
        """Code -> the decision its findings are part of (a rule's `one_decision`): reported
        once per function with the other rules of that decision."""
        return {r.code: r.params.reporting.one_decision for r in self.rules if r.params.reporting.one_decision}

    def of_kind(self, kind: str) -> list[Rule]:
        """The active rules of one kind (in code order)."""
        return self._by_kind.get(kind, [])

    def narrowed(self, ignore: tuple[str, ...]) -> ActiveRules:
        """The same with more codes ignored (a notebook's `!` lines skip per-line setup notes)."""
        s = self.selection
        return replace(self, selection=Selection(s.version, s.select, s.ignore + ignore, s.kinds, s.extend))

    def by_code(self, code: str) -> Rule | None:
        """Any rule of the set, active or not (a rule may name another as its data source)."""
        return self.ruleset.by_code(code)
