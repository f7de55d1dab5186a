"""Kind `config-key`: keys and values of training, accelerate and DeepSpeed configs.

A rule names keys (a bare name matches at any depth, a dotted path such as `bf16.enabled`
matches the end of the key path; globs allowed), the config types it applies to, the values
that make it fire and, when the fix is certain, the value to write instead. The same rules
read `--key value` flags of the launch commands the rule names in shell scripts (`launchers`),
because LLaMA-Factory and the HF Trainer take the same fields as flags and as config keys.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from porter.filetypes._configtree import Node, Scalar, ScalarValue, iter_pairs, render_like, top_keys
from porter.rules import Rule
from porter.rules.kinds import ConfigKeyParams


# A mapping with one of these top-level keys is a training config (LLaMA-Factory, HF Trainer,
# TRL, axolotl, LitGPT, torchtune-like); names chosen because they appear in no other common config.
_TRAINING = frozenset(
    {
        "model_name_or_path",
        "per_device_train_batch_size",
        "finetuning_type",
        "do_train",
        "micro_batch_size",
        "learning_rate",
        "num_train_epochs",
        "gradient_accumulation_steps",
        "lora_r",
    }
)
_ACCELERATE = frozenset({"distributed_type", "compute_environment"})
# DeepSpeed's own names (an `fp16`/`bf16` block alone is not enough: model configs have them too).
_DEEPSPEED = frozenset(
    {
        "zero_optimization",
        "train_micro_batch_size_per_gpu",
        "train_batch_size",
        "zero_allow_untested_optimizer",
        "steps_per_print",
        "gradient_clipping",
    }
)


# Documents of other tools, whose values are never a run's settings, even a `device:` (a CI
# workflow's env, a Kubernetes manifest, a conda environment, pre-commit, compose).
_OTHER_TOOLS = frozenset({"jobs", "apiVersion", "stages", "channels", "repos", "services"})


def config_type(root: Node) -> str | None:
    """Which kind of config a document is, by its top-level keys; None for anything else."""
    keys = top_keys(root)
    if not keys:
        return None
    if _ACCELERATE & keys.keys():
        return "accelerate"
    if _DEEPSPEED & keys.keys():
        return "deepspeed"
    if _TRAINING & keys.keys():
        return "training"
    return None


def key_screen(rules: Iterable[Rule], quoted: bool) -> re.Pattern[bytes]:
    """A bytes regex that finds, in every file a config rule could fire in, one of the rules'
    keys written as a key: the last part of its path followed by a colon, YAML's `bf16:`,
    `'bf16' :`, `{bf16: true}`, or JSON's `"bf16":` (`quoted`). A key named inside a longer
    one (`per_device_train_batch_size` for `device`) is not one; a glob in a key matches any
    key characters. Never matches when no rule is active. It reads the bytes, before
    decoding: data files named like configs are large and most hold none of these keys."""
    parts = set()
    for rule in rules:
        for key in ConfigKeyParams.of(rule).keys:
            last = key.rsplit(".", 1)[-1]
            parts.add("".join(r"[\w.-]*" if ch == "*" else r"[\w.-]" if ch == "?" else re.escape(ch) for ch in last))
    if not parts:
        return re.compile(rb"(?!)")
    keys = "|".join(sorted(parts))
    pattern = rf'"(?:{keys})"\s*:' if quoted else rf"""(?<![\w-])(?:{keys})["']?[ \t]*:"""
    return re.compile(pattern.encode())


@lru_cache(maxsize=None)
def _keys_regex(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """Any of the key patterns, at the top or under any parent (`bf16` also matches `a.bf16`)."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})|(?:{fnmatch.translate('*.' + p)})" for p in patterns))


def _same(value: ScalarValue, wanted: object) -> bool:
    if isinstance(wanted, bool) or isinstance(value, bool):  # True is not 1 here
        return isinstance(value, bool) and value is wanted
    if isinstance(wanted, str):
        return isinstance(value, str) and fnmatch.fnmatchcase(value.lower(), wanted.lower())
    return value == wanted


def value_fires(rule: Rule, value: ScalarValue) -> bool:
    """Whether `value` makes the rule fire: one of `values`, or without `values` any set value."""
    wanted = ConfigKeyParams.of(rule).values
    if wanted is None:
        return value is not None and value is not False and value != ""
    return any(_same(value, w) for w in wanted)


def new_value(rule: Rule, value: ScalarValue) -> str | None:
    """The replacement value, when the rule has one for this value (`cuda:` keys are prefixes)."""
    if not isinstance(value, str):
        return None
    for old, new in (ConfigKeyParams.of(rule).replace or {}).items():
        if value == old:
            return new
        if old.endswith(":") and value.startswith(old):
            return new + value[len(old) :]
    return None


@dataclass(frozen=True)
class Hit:
    """A rule firing on one key: the value scalar, and the text to write there (None: report only)."""

    rule: Rule
    key: str
    value: Scalar
    replacement: str | None
    blocker: str | None = None  # the key=value that keeps the rule from rewriting


def _blocker(rule: Rule, pairs: list[tuple[tuple[str, ...], Scalar | Node]]) -> str | None:
    for key, values in (ConfigKeyParams.of(rule).blocked_by or {}).items():
        for path, value in pairs:
            if path[-1] == key and isinstance(value, Scalar) and value.value not in (None, False):
                if any(fnmatch.fnmatchcase(str(value.value).lower(), str(v).lower()) for v in values):
                    return f"{key}: {value.value}"
    return None


def match_pairs(pairs: list[tuple[tuple[str, ...], Scalar | Node]], kind: str, rules: Iterable[Rule]) -> Iterator[Hit]:
    """Hits of the rules for config type `kind` over (key path, value) pairs."""
    scalars = [(".".join(path), path, value) for path, value in pairs if isinstance(value, Scalar)]
    for rule in rules:
        if kind not in ConfigKeyParams.of(rule).configs and "any" not in ConfigKeyParams.of(rule).configs:
            continue
        keys = _keys_regex(tuple(ConfigKeyParams.of(rule).keys))
        # Once per rule, not per scalar: a large config repeats a few key paths (runs.device),
        # and what blocks a rewrite is a setting of the document, not of the hit (looking for
        # it again at every hit was quadratic).
        matched: dict[str, bool] = {}
        blockers: list[str | None] = []
        for dotted, path, value in scalars:
            hit = matched.get(dotted)
            if hit is None:
                hit = matched[dotted] = keys.match(dotted) is not None
            if not hit or not value_fires(rule, value.value):
                continue
            new = new_value(rule, value.value)
            if new is not None and not blockers:
                blockers.append(_blocker(rule, pairs))
            blocker = blockers[0] if new is not None else None
            text = render_like(value, new) if new is not None and blocker is None else None
            yield Hit(rule, ".".join(path), value, text, blocker)


def match_tree(root: Node, rules: Iterable[Rule]) -> Iterator[Hit]:
    """Hits in one parsed document: the rules for its config type, and in any mapping document
    the rules for `any` config (a run config of any schema with `device: cuda`)."""
    kind = config_type(root)
    if kind is None:
        rules = [r for r in rules if "any" in ConfigKeyParams.of(r).configs]
        keys = top_keys(root)
        if not rules or not keys or _OTHER_TOOLS & keys.keys():
            return iter(())
        kind = "other"
    pairs = [(path, value) for path, _, value in iter_pairs(root)]
    return match_pairs(pairs, kind, rules)


def hit_message(hit: Hit) -> str:
    """The finding's message: what was rewritten, or what needs attention and why it was kept."""
    rule = hit.rule
    summary = rule.message or rule.summary
    shown = hit.value.value if not isinstance(hit.value.value, bool) else str(hit.value.value).lower()
    if hit.replacement is not None:
        return f"{hit.key}: {shown} -> {new_value(rule, hit.value.value)}"
    if hit.blocker is not None:
        return f"{hit.key}: {shown}: {summary} (not rewritten: {hit.blocker} needs it)"
    return f"{hit.key}: {shown}: {summary}"
