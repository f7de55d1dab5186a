"""Every rule kind porter knows, declared in one explicit table (KINDS), and the one interface
a kind's matcher has outside Python (Matcher).

A kind is two things that live in two layers, by need:
- its declaration, here: the typed, frozen parameters class its rules hold and how its rules are
  shown (`Kind`). The loader validates each rule against it, so a misspelt key, a value of the
  wrong type or one outside a field's known choices is an error naming the file and the rule
  when the rules load (convert, check and `porter rules` alike), never a rule that silently
  matches nothing; code reads the typed object (`QualifiedNameParams.of(rule).match`).
- its matcher, in the layer of the view it reads: a Python kind is a module of
  porter/python/kinds/ ending with its `PythonKind`, listed in PYTHON_KINDS; every other file
  type reads its file once into a view and lists its kinds' `Matcher`s in one table
  (porter/filetypes/: SHELL_KINDS, DOCKERFILE_KINDS, COMPOSE_KINDS, CONFIG_KINDS,
  NOTEBOOK_KINDS, REQUIREMENTS_KINDS, ...); vendor-path and suppression-comment are applied by
  the engine (porter/engine/vendor_paths.py, reporting.py). A matcher names its kind, and a
  name not declared here fails when its table is built (`declared`).
The declarations stay at the bottom of the house because the loader, `porter rules`, the run's
selection and the tables read them without any pipeline: importing every matcher costs ~0.2 s
of CPU (measured beside `porter rules`' 0.1 s). Adding a kind: its parameters class and a line
in KINDS here, its matcher and a line in its view's table.

What a project's rules differ in is data, through general options (`launchers`,
`kernel_decorators`, `when_importing`, ...), never a code path named after a project.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from porter.rules.params import Field, Params, strings, switch, table, text
from porter.core.severity import Severity
from porter.rules.terms import SEVERITIES

if TYPE_CHECKING:  # only in annotations: the loader and `porter rules` do not load the finding model
    from porter.core.model import Finding
    from porter.rules.model import Rule

# Values some fields may hold. Kept here, at the bottom of the house, so the loader can check
# them without importing the tables or pipelines that use them.
API_STATUSES = ("supported", "partial", "unsupported", "unknown")  # an op table entry's status
API_USES = ("api", "method", "likely-method")  # how the op scan saw a use
PACKAGE_ACTIONS = ("keep", "replace", "drop", "flag")  # a package table entry's action
REQUIREMENT_STRING = "requirement-string"  # the kind every packaging file's requirements go through
# A requirement-string rule's `on`: the table's actions and what porter checks itself.
# "extra": an extra named like a distribution the table does not keep (`.[bitsandbytes]`);
# "vendor-build": a distribution that must come from the target's own build of it.
# "releases-excluded" / "releases-admitted": a pin against the releases that work on the target
# line (the table's `releases`): it excludes them all, or admits releases below them.
REQUIREMENT_OUTCOMES = (
    "drop",
    "replace",
    "flag",
    "note",
    "local-version",
    "index-url",
    "unparsed",
    "extra",
    "vendor-build",
    "releases-excluded",
    "releases-admitted",
)
# "any": every YAML/JSON mapping document, whatever tool reads it (run configs of any schema).
CONFIG_TYPES = ("training", "accelerate", "deepspeed", "any")
SUPPRESSION_PROBLEMS = ("invalid", "unused")  # what a suppression-comment rule reports
CODEMOD = "codemod"  # the kind of a project's codemod rules (porter/rules/codemods.py)
LIBRARY_IMPORT = "library-import"  # the kind that reads the package table for imports (and the tree's own packages)


# How far a rule's findings fold across files (`once_per_subject_in_tree`): "warnings" folds all
# but errors (each a line to change where it is); "errors-too" folds errors as well, where they
# are one decision repeated (porter/engine/folding.py).
FOLD_SUBJECT_CHOICES = ("warnings", "errors-too")


# ---- Python kinds (porter/python/kinds/, one module each) ------------------------------------


class QualifiedNameParams(Params):
    """Uses of qualified names (`torch.cuda.amp.autocast`), resolved through the file's imports."""

    match: tuple[str, ...] = strings(required=True)
    replace: Mapping[str, str] = table()
    add_keywords: Mapping[str, Any] = table()  # keyword -> literal added to a call of a replaced name
    exact: bool = switch()  # only the name itself, not attributes under it
    report: bool = switch()  # report uses as well as replacing them
    # Off for a project whose own pins guarantee that release ("transformers>=5.4.0";
    # porter/filetypes/pins.py, read once per tree run).
    unless_pinned: str | None = text()
    once_per_file: bool = switch()
    once_per_folder: bool = switch()
    once_per_tree: bool = switch()
    note_in_tests: bool = switch()  # a finding inside a `test_*` function is a note
    callables: bool = switch()  # the names are functions or classes: assigning to one is a patch, not a use
    unless_called_with: Mapping[str, Any] = table()  # keyword -> literal values with which a call is fine
    note_when_switched_by: tuple[str, ...] = strings()  # settings (globs): under `if args.<name>:`, a note
    # Rules naming the same decision report once per function (`load_in_4bit=`, `load_in_8bit=`
    # and a BitsAndBytesConfig: one quantized load; porter/python/decisions.py).
    one_decision: str | None = text()


class MethodParams(Params):
    """Attribute uses on any receiver (`.cuda()`)."""

    attribute: str = text(required=True)
    replace: str | None = text()
    called: bool = switch()  # only calls of it (`x.cuda()`), else only other uses


class StringLiteralParams(Params):
    """Device strings in code (`"cuda"`, `"cuda:0"`, `f"cuda:{rank}"`), not in comments or data."""

    values: Mapping[str, str] = table()  # literal -> its replacement
    prefixes: Mapping[str, str] = table()  # prefix ("cuda:") -> its replacement
    flag: tuple[str, ...] = strings()  # literals reported, not replaced
    keep_in_calls: tuple[str, ...] = strings()  # calls whose arguments name another library's device
    report_in_modules: tuple[str, ...] = strings()  # modules where a kept literal is reported
    report_in_comparisons: bool = switch()
    keep_in_decorators_near: tuple[str, ...] = strings()  # decorator names that mark a CUDA-only test
    flag_in_strategy: tuple[str, ...] = strings()  # device words reported inside a strategy string
    strategy_words: str | None = text()  # the vocabulary of such strings
    note_in_tests: bool = switch()
    device_tables: Mapping[str, Any] = table()  # device -> settings, in tables keyed by device
    in_keys: bool = switch()  # also dictionary keys
    # A qualified-name rule: the argument given in a call that rule reports is left to it.
    covered_by: str | None = text(rule_of_kind="qualified-name")


class EnvVarParams(Params):
    """Environment variables the code reads or sets (`CUDA_VISIBLE_DEVICES`)."""

    names: tuple[str, ...] = strings(required=True)
    replace: Mapping[str, str] = table()
    off_values: tuple[str, ...] = strings()  # values that switch the variable off (`RWKV_CUDA_ON=0`)
    notes: Mapping[str, str] = table()  # name pattern -> why setting it changes nothing on the target
    launcher_exports: tuple[str, ...] = strings()  # names torchrun sets in every worker
    once_per_subject: bool = switch()  # a variable's reports (not its renames) once per module


class KeywordValueParams(Params):
    """A keyword argument or dictionary key set to a value (`backend="nccl"`)."""

    keyword: str = text(required=True)
    values: tuple[Any, ...] | None = strings(absent=None)  # literals reported (absent: any value)
    replace: str | None = text()
    calls: tuple[str, ...] = strings()  # only in calls of these names (and in dictionaries)
    report_unknown: bool = switch()  # also a value porter cannot read
    note_in_tests: bool = switch()
    also_keywords: tuple[str, ...] = strings()  # other names of the same setting
    unless_values: tuple[Any, ...] = strings()  # literals with which it asks for nothing
    when_importing: tuple[str, ...] = strings()  # only in modules that import one of these packages
    once_per_file: bool = switch()
    covered_by: str | None = text(rule_of_kind="qualified-name")
    one_decision: str | None = text()


class LibraryImportParams(Params):
    """Imports of libraries the package table has an action for."""

    actions: tuple[str, ...] = strings(required=True, choices=PACKAGE_ACTIONS)
    once_per_subject_in_tree: str | None = text(choices=FOLD_SUBJECT_CHOICES)


class RequirementStringParams(Params):
    """Requirement strings (Python lists, requirements files, pyproject, setup.cfg, scripts)."""

    on: str = text(required=True, choices=REQUIREMENT_OUTCOMES)
    url_patterns: tuple[str, ...] = strings(regex=True)
    once_per_file: bool = switch()
    once_per_subject: bool = switch()
    once_per_tree: bool = switch()
    once_per_line: bool = switch()  # the torch family in one `pip install` is one thing to act on


class KernelModuleParams(Params):
    """Kernel languages, other vendors' stacks and compiled CUDA extensions."""

    kernel_modules: tuple[str, ...] = strings(required=True)
    # The decorators that make a function one of their kernels (`@triton.jit`): the module defines
    # kernels, not only imports one (a kernel module's attribute, `triton.autotune`).
    kernel_decorators: tuple[str, ...] = strings()
    extension_suffixes: tuple[str, ...] = strings()  # how a compiled extension's module name ends (`_cuda`)
    patch_modules: tuple[str, ...] = strings()  # CUDA-only libraries a monkey patch swaps in


class DeviceGuardParams(Params):
    """`if torch.cuda.is_available():` chains: a target branch before the CUDA one."""

    checks: tuple[str, ...] = strings(required=True)
    target_check: str = text(required=True)  # "{torch}.mlu.is_available()"
    other_devices: tuple[str, ...] = strings(required=True)
    target_device: str = text(required=True)  # the device the target branch uses ("mlu")
    target_module: str | None = text()  # the package that registers it, when torch needs one ("torch_mlu")
    cuda_only_modules: tuple[str, ...] = strings()
    cuda_only_strings: tuple[str, ...] = strings()


class ImportInsertParams(Params):
    """`import torch_mlu` where a module uses the target after the edits."""

    module: str = text(required=True)
    when_importing: str = text(required=True)
    # A module that imports one of these libraries (which import torch for it) and has an edit of
    # one of those codes needs the module too (`.mlu()` on a model transformers loaded).
    also_when_importing: tuple[str, ...] = strings()
    also_when_edited_by: tuple[str, ...] = strings()
    int_device_lines: tuple[str, ...] = strings()  # target lines on which `.to(0)` needs it too


# ---- the op scan, paths, configs, scripts, containers, notebooks ----------------------------


class OpTableParams(Params):
    """APIs the target's op table lists as unsupported, partial or unknown (porter/python/opscan.py)."""

    statuses: tuple[str, ...] = strings(required=True, choices=API_STATUSES)
    uses: tuple[str, ...] = strings(required=True, choices=API_USES)
    severity_by_status: Mapping[str, Severity] = table(keys_in=API_STATUSES, choices=SEVERITIES)
    opt_in: bool = switch()  # runs only when --select names its code


class VendorPathParams(Params):
    """Files and folders named for another vendor (porter/engine/vendor_paths.py)."""

    words: tuple[str, ...] = strings(required=True)
    own: tuple[str, ...] = strings()  # the words that name the target itself


class ConfigKeyParams(Params):
    """Keys of training, accelerate and DeepSpeed configs (porter/filetypes/_config_rules.py)."""

    keys: tuple[str, ...] = strings(required=True)
    configs: tuple[str, ...] = strings(required=True, choices=CONFIG_TYPES)
    values: tuple[Any, ...] | None = strings(absent=None)  # values reported (absent: any)
    replace: Mapping[str, Any] = table()
    blocked_by: Mapping[str, Any] = table()
    # Commands whose `--key value` flags are these keys (`torchrun train.py --bf16 true`; the names
    # porter/filetypes/_shell_syntax.py's `identities` gives: `accelerate launch`, `python`), also
    # where a process launcher (`mpirun ... python train.py`) starts them; none: configs only.
    launchers: tuple[str, ...] = strings()
    key_value_launchers: tuple[str, ...] = strings()  # of those, the ones that also take `key=value` (OmegaConf)
    # distribution -> {summary, message, suggestion} said instead where the project's own
    # requirements name it (ActiveRules.project_requires).
    words_when_required: Mapping[str, Mapping[str, str]] = table()
    once_per_subject_in_tree: str | None = text(choices=FOLD_SUBJECT_CHOICES)

    def rewrites(self) -> bool:
        return bool(self.replace)


class PythonSnippetParams(Params):
    """`python -c` snippets and heredocs in scripts (porter/filetypes/_shell_snippets.py)."""

    interpreters: tuple[str, ...] = strings(required=True)


class ShellEnvVarParams(Params):
    """Variables a script sets, by an env-var rule's names and renames."""

    from_rule: str = text(required=True, rule_of_kind="env-var")
    once_per_subject: bool = switch()  # one finding per variable and file
    once_per_file: bool = switch()
    once_per_folder: bool = switch()


class ShellCommandParams(Params):
    """Commands a script runs (`nvidia-smi`)."""

    commands: tuple[str, ...] = strings(required=True)
    probes: tuple[str, ...] = strings()  # commands that run them as an argument (`which`)
    once_per_folder: bool = switch()


class ShellLauncherFlagParams(Params):
    """A launcher's flags (`deepspeed --num_gpus`)."""

    launchers: tuple[str, ...] = strings(required=True)
    flags: tuple[str, ...] = strings(required=True)
    values: tuple[Any, ...] | None = strings(absent=None)


class ShellEnvSetupParams(Params):
    """A launch script that needs the target's environment set up first."""

    launchers: tuple[str, ...] = strings(required=True)
    markers: tuple[str, ...] = strings(required=True)


class ContainerImageParams(Params):
    """Base images built for CUDA (`FROM nvidia/cuda:...`)."""

    image_patterns: tuple[str, ...] = strings(required=True, regex=True)


class ContainerEnvVarParams(Params):
    """Variables a Dockerfile or compose file sets: an env-var rule's (`from_rule`) or its own `names`."""

    from_rule: str | None = text(rule_of_kind="env-var")
    names: tuple[str, ...] = strings()
    once_per_file: bool = switch()  # a block of NCCL tuning variables is one thing to drop


class ComposeKeyParams(Params):
    """Compose keys that reserve NVIDIA devices (`driver: nvidia`)."""

    match: Mapping[str, Any] = table(required=True)  # key -> value globs


class NotebookCellParams(Params):
    """A notebook cell that does not parse as Python after IPython syntax is masked."""


class CodemodParams(Params):
    """A project's libcst codemod (porter/rules/codemods.py): declared by its class, never in TOML."""

    file: str = text(required=True)
    class_name: str = text(required=True, key="class")
    names: tuple[str, ...] = strings(required=True)
    digest: str = text(required=True)


class SuppressionCommentParams(Params):
    """porter's own findings about `# porter: ignore[...]` comments (porter/engine/pipeline.py)."""

    on: str = text(required=True, choices=SUPPRESSION_PROBLEMS)
    opt_in: bool = switch()


@dataclass(frozen=True)
class Kind:
    """A rule kind: its name, its parameters class, and how its rules are declared and shown."""

    name: str
    params: type[Params]
    # The file a rule example of this kind runs in, unless the example names one.
    example_file: str = "train.py"
    in_toml: bool = True  # False: rules of this kind come from elsewhere (a codemod class)
    # Every finding of a rule of this kind has the rule's own severity, and only a rule with a
    # `replace` edits: an `info` rule without one cannot show anything unless it is selected by
    # name, so a run does not apply it (ActiveRules.rules).
    fixed_severity: bool = False

    def field(self, key: str) -> Field | None:
        return self.params.field(key)

    @property
    def required(self) -> tuple[str, ...]:
        return self.params.required()


# Every kind, in one explicit table (the Python kinds' matchers, in the order they run:
# porter/python/kinds/__init__.py).
KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("qualified-name", QualifiedNameParams),
        Kind("method", MethodParams),
        Kind("string-literal", StringLiteralParams),
        Kind("env-var", EnvVarParams),
        Kind("keyword-value", KeywordValueParams),
        Kind(LIBRARY_IMPORT, LibraryImportParams),
        Kind(REQUIREMENT_STRING, RequirementStringParams, example_file="requirements.txt"),
        Kind("kernel-module", KernelModuleParams),
        Kind("device-guard", DeviceGuardParams),
        Kind("import-insert", ImportInsertParams),
        Kind("op-table", OpTableParams),
        Kind("vendor-path", VendorPathParams, example_file=""),  # examples are paths in a tree
        Kind("config-key", ConfigKeyParams, example_file="train_args.yaml", fixed_severity=True),
        Kind("python-snippet", PythonSnippetParams, example_file="run.sh"),
        Kind("shell-env-var", ShellEnvVarParams, example_file="run.sh"),
        Kind("shell-command", ShellCommandParams, example_file="run.sh"),
        Kind("shell-launcher-flag", ShellLauncherFlagParams, example_file="run.sh"),
        Kind("shell-env-setup", ShellEnvSetupParams, example_file="run.sh"),
        Kind("container-image", ContainerImageParams, example_file="Dockerfile"),
        Kind("container-env-var", ContainerEnvVarParams, example_file="Dockerfile"),
        Kind("compose-key", ComposeKeyParams, example_file="docker-compose.yml"),
        Kind("notebook-cell", NotebookCellParams, example_file="notebook.ipynb"),
        Kind(CODEMOD, CodemodParams, in_toml=False),
        Kind("suppression-comment", SuppressionCommentParams),
    )
}


View = TypeVar("View")


@dataclass(frozen=True)
class Matcher(Generic[View]):
    """How one kind matches in one view of a file (a parsed shell script: porter/filetypes/
    shell.py's SHELL_KINDS; a Dockerfile's settings: docker.py's DOCKERFILE_KINDS; ...):
    `find(view, rules)` with the kind's active rules, never called without any (filetypes/
    _common.py's `matched` loops over a table). The view holds what the file type parsed once
    for all its kinds, and the run's whole rule set, for a kind that reads another's rules
    (`from_rule`, the requirement policy).
    Python's kinds have their own (porter/python/kinds/base.py), with a screen and a finalizer."""

    kind: str
    find: Callable[[View, list[Rule]], Iterable[Finding]]

    def __post_init__(self) -> None:
        declared(self.kind)


def declared(kind: str) -> Kind:
    """The declaration of `kind`: a matcher table names kinds by name, and a misspelt one would
    silently match nothing, so a matcher for an undeclared kind fails when its table is built."""
    found = KINDS.get(kind)
    if found is None:
        raise ValueError(f"no rule kind {kind!r} is declared in porter/rules/kinds.py (known: {', '.join(KINDS)})")
    return found
