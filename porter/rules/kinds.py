"""Every rule kind porter knows, and the fields its rules take: the explicit kind registry.

The loader validates each rule against its kind's schema here, so a misspelt key, a value of
the wrong type or a value outside a field's known choices is an error naming the file and the
rule when the rules load (convert, check and `porter rules` alike), never a rule that
silently matches nothing. The code that applies a kind lives in the layer of its file type
(porter/python/kinds/, porter/filetypes/, porter/engine/vendor_paths.py) and refers to the
kind by the name given here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from porter.rules.terms import SEVERITIES

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


@dataclass(frozen=True)
class Field:
    """One field of a kind: its TOML type and, for a list/str/dict, the values it may hold."""

    type: type
    choices: tuple[str, ...] = ()  # for a list: each item; for a dict: each value; for a str: itself
    keys_in: tuple[str, ...] = ()  # for a dict: each key
    rule_of_kind: str | None = None  # a str that names another rule (by code) of this kind
    regex: bool = False  # for a list: each item is a regular expression (compiled when the rules load)


@dataclass(frozen=True)
class KindSchema:
    name: str
    required: dict[str, Field] = field(default_factory=dict)
    optional: dict[str, Field] = field(default_factory=dict)
    # The file a rule example of this kind runs in, unless the example names one.
    example_file: str = "train.py"
    in_toml: bool = True  # False: rules of this kind come from elsewhere (a codemod class)
    # Every finding of a rule of this kind has the rule's own severity, and only a rule with a
    # `replace` edits: an `info` rule without one cannot show anything unless it is selected by
    # name, so a run does not apply it (ActiveRules.rules).
    fixed_severity: bool = False

    def field(self, key: str) -> Field | None:
        return self.required.get(key) or self.optional.get(key)


def _f(typ: type, **kw) -> Field:
    return Field(typ, **kw)


_LIST, _STR, _DICT, _BOOL = _f(list), _f(str), _f(dict), _f(bool)
_REGEXES = _f(list, regex=True)
# `once_per_subject_in_tree`: one finding per subject (a library, a config key) for the whole tree,
# naming the other files (porter/engine/folding.py): "warnings" folds all but errors (each a line
# to change where it is); "errors-too" folds errors as well, where they are one decision repeated.
_PER_SUBJECT = _f(str, choices=("warnings", "errors-too"))

# The Python kinds (porter/python/kinds/, in the order their finalizers must run: guards
# decide which edits stay before imports are added), then the op scan, then other file types.
KINDS: dict[str, KindSchema] = {
    k.name: k
    for k in (
        # `unless_pinned` ("transformers>=5.4.0"): off for a project whose own pins guarantee that
        # release (porter/filetypes/pins.py, read once per tree run).
        # `note_in_tests`: a finding inside a `test_*` function is a note (porter/python/analyze.py).
        # `callables`: the matched names are functions or classes; assigning to one is a patch, not a use.
        # `unless_called_with`: keyword -> literal values with which a call of a reported name is fine.
        # `note_when_switched_by`: setting names (globs); a use under `if args.<name>:` is a note (the switch is the finding).
        # `one_decision` (here and for keyword values): rules naming the same decision report once per function
        # (`load_in_4bit=`, `load_in_8bit=` and a BitsAndBytesConfig: one quantized load; porter/python/decisions.py).
        KindSchema(
            "qualified-name",
            {"match": _LIST},
            {
                "replace": _DICT,
                "add_keywords": _DICT,
                "exact": _BOOL,
                "report": _BOOL,
                "unless_pinned": _STR,
                "once_per_file": _BOOL,
                "note_in_tests": _BOOL,
                "callables": _BOOL,
                "once_per_folder": _BOOL,
                "once_per_tree": _BOOL,
                "unless_called_with": _DICT,
                "note_when_switched_by": _LIST,
                "one_decision": _STR,
            },
        ),
        KindSchema("method", {"attribute": _STR}, {"replace": _STR, "called": _BOOL}),
        KindSchema(
            "string-literal",
            {},
            {
                "values": _DICT,
                "prefixes": _DICT,
                "flag": _LIST,
                "keep_in_calls": _LIST,
                "report_in_modules": _LIST,
                "report_in_comparisons": _BOOL,
                "keep_in_decorators_near": _LIST,
                "flag_in_strategy": _LIST,
                "strategy_words": _STR,
                "note_in_tests": _BOOL,
                "device_tables": _DICT,
                "in_keys": _BOOL,
                "covered_by": _f(str, rule_of_kind="qualified-name"),
            },
        ),
        # `off_values`: values that switch the variable off (`RWKV_CUDA_ON=0`): set to one, it is not reported.
        # `notes`: name pattern -> why setting it changes nothing that runs on the target (a note, not a finding).
        # `launcher_exports`: the names torchrun sets in every worker; in a list of several of them, one is kept.
        KindSchema(
            "env-var",
            {"names": _LIST},
            {"replace": _DICT, "off_values": _LIST, "notes": _DICT, "launcher_exports": _LIST},
        ),
        # `covered_by` (here and for string literals): a qualified-name rule; the argument given in a call that rule reports
        # (BitsAndBytesConfig(load_in_4bit=True)) is left to it: one thing to act on, one finding.
        # `also_keywords`: other names of the same setting; `unless_values`: literals with which it asks for nothing;
        # `when_importing`: only in modules that import one of these packages (porter/python/kinds/keyword_value.py).
        KindSchema(
            "keyword-value",
            {"keyword": _STR},
            {
                "values": _LIST,
                "replace": _STR,
                "calls": _LIST,
                "report_unknown": _BOOL,
                "note_in_tests": _BOOL,
                "also_keywords": _LIST,
                "unless_values": _LIST,
                "when_importing": _LIST,
                "once_per_file": _BOOL,
                "covered_by": _f(str, rule_of_kind="qualified-name"),
                "one_decision": _STR,
            },
        ),
        KindSchema(
            LIBRARY_IMPORT, {"actions": _f(list, choices=PACKAGE_ACTIONS)}, {"once_per_subject_in_tree": _PER_SUBJECT}
        ),
        # `once_per_file`: the rule's findings in one file are one thing to act on (porter/engine/pipeline.py);
        # `once_per_line`: those on one line are (the torch family in one `pip install`);
        # `once_per_tree`: the same advice about the environment in many files is one (porter/engine/folding.py).
        KindSchema(
            REQUIREMENT_STRING,
            {"on": _f(str, choices=REQUIREMENT_OUTCOMES)},
            {
                "url_patterns": _REGEXES,
                "once_per_file": _BOOL,
                "once_per_subject": _BOOL,
                "once_per_tree": _BOOL,
                "once_per_line": _BOOL,
            },
            example_file="requirements.txt",
        ),
        # `kernel_modules`: kernel languages and other vendors' stacks; `extension_suffixes`: how a compiled CUDA
        # extension's module name ends (`_cuda`); `patch_modules`: CUDA-only libraries a monkey patch swaps in.
        KindSchema("kernel-module", {"kernel_modules": _LIST}, {"extension_suffixes": _LIST, "patch_modules": _LIST}),
        KindSchema(
            "device-guard",
            {"checks": _LIST, "target_check": _STR, "other_devices": _LIST},
            {"cuda_only_modules": _LIST, "cuda_only_strings": _LIST, "target_device": _STR},
        ),
        # `also_when_importing` + `also_when_edited_by`: a module that imports one of those libraries
        # (which import torch for it) and has an edit of one of those codes needs the module too
        # (`.mlu()` on a model transformers loaded exists only after import torch_mlu).
        # `int_device_lines`: target lines on which a module giving torch an integer device (`.to(0)`) needs it too.
        KindSchema(
            "import-insert",
            {"module": _STR, "when_importing": _STR},
            {"also_when_importing": _LIST, "also_when_edited_by": _LIST, "int_device_lines": _LIST},
        ),
        KindSchema(
            "op-table",
            {"statuses": _f(list, choices=API_STATUSES), "uses": _f(list, choices=API_USES)},
            {"severity_by_status": _f(dict, keys_in=API_STATUSES, choices=SEVERITIES), "opt_in": _BOOL},
        ),
        # `own`: the words that name the target itself (a file already ported, kept all the same).
        KindSchema("vendor-path", {"words": _LIST}, {"own": _LIST}, example_file=""),  # examples are paths in a tree
        # `words_when_required`: distribution -> {summary, message, suggestion} the rule says instead where the
        # project's own requirements name it (ActiveRules.project_requires, read by porter/filetypes/pins.py).
        KindSchema(
            "config-key",
            {"keys": _LIST, "configs": _f(list, choices=CONFIG_TYPES)},
            {
                "values": _LIST,
                "replace": _DICT,
                "blocked_by": _DICT,
                "cli": _BOOL,
                "words_when_required": _DICT,
                "once_per_subject_in_tree": _PER_SUBJECT,
            },
            example_file="train_args.yaml",
            fixed_severity=True,
        ),
        KindSchema("python-snippet", {"interpreters": _LIST}, example_file="run.sh"),
        # `once_per_subject`: one finding per variable (distribution) and file, with the count of the others.
        # `once_per_folder`: the same report in every script of a folder is one (porter/engine/folding.py).
        KindSchema(
            "shell-env-var",
            {"from_rule": _f(str, rule_of_kind="env-var")},
            {"once_per_subject": _BOOL, "once_per_file": _BOOL, "once_per_folder": _BOOL},
            example_file="run.sh",
        ),
        KindSchema(
            "shell-command", {"commands": _LIST}, {"probes": _LIST, "once_per_folder": _BOOL}, example_file="run.sh"
        ),
        KindSchema(
            "shell-launcher-flag", {"launchers": _LIST, "flags": _LIST}, {"values": _LIST}, example_file="run.sh"
        ),
        KindSchema("shell-env-setup", {"launchers": _LIST, "markers": _LIST}, example_file="run.sh"),
        KindSchema("container-image", {"image_patterns": _REGEXES}, example_file="Dockerfile"),
        # Either `from_rule` (an env-var rule whose names and renames apply) or its own `names`.
        # `once_per_file` (as for shell scripts): a block of NCCL tuning variables is one thing to drop.
        KindSchema(
            "container-env-var",
            {},
            {"from_rule": _f(str, rule_of_kind="env-var"), "names": _LIST, "once_per_file": _BOOL},
            example_file="Dockerfile",
        ),
        KindSchema("compose-key", {"match": _DICT}, example_file="docker-compose.yml"),
        # A notebook cell that does not parse as Python after IPython syntax is masked.
        KindSchema("notebook-cell", {}, example_file="notebook.ipynb"),
        # A project's libcst codemod (porter/rules/codemods.py): declared by its class, never in TOML.
        KindSchema(CODEMOD, {"file": _STR, "class": _STR, "names": _LIST, "digest": _STR}, in_toml=False),
        # porter's own findings about `# porter: ignore[...]` comments (porter/engine/pipeline.py).
        KindSchema("suppression-comment", {"on": _f(str, choices=SUPPRESSION_PROBLEMS)}, {"opt_in": _BOOL}),
    )
}

# The kinds the Python pipeline runs per parsed file, in order.
PYTHON_KINDS = (
    "qualified-name",
    "method",
    "string-literal",
    "env-var",
    "keyword-value",
    "library-import",
    "requirement-string",
    "kernel-module",
    "device-guard",
    "import-insert",
)
