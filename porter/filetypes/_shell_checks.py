"""The shell rule kinds: environment variables, commands, launcher flags and environment setup.

Every check reads the tree-sitter syntax tree, so comments, `echo` text and heredoc bodies
are never matched. Findings come in the coordinates of the text that was parsed; notebooks
parse their `!` lines on their own and map them back themselves.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from porter.filetypes._common import TextFile
from porter.filetypes._config_rules import hit_message, match_pairs
from porter.filetypes._configtree import Scalar
from porter.filetypes._shell_syntax import Script, Word, command_words, identities
from porter.python.kinds.env_var import assigned_names, variable_verdict  # the same rename table as the Python rule
from porter.core.model import Finding
from porter.filetypes._installs import install_verdicts
from porter.tables.requirement_policy import RequirementPolicy, requirement_findings
from porter.rules import ActiveRules, Rule
from porter.rules.kinds import (
    ConfigKeyParams,
    ShellCommandParams,
    ShellEnvSetupParams,
    ShellEnvVarParams,
    ShellLauncherFlagParams,
)


# Commands that start another command on every rank or host (`mpirun -n 128 ... python train.py --flag`):
# the training command's flags are read from where it starts.
_PROCESS_LAUNCHERS = frozenset({"mpirun", "mpiexec", "srun"})
_SETTING = ("variable_assignment", "declaration_command", "unset_command")


@dataclass(frozen=True)
class ShellView:
    """A script as every shell kind reads it: the text, its syntax tree and the run's rules."""

    file: TextFile
    script: Script
    rules: ActiveRules


def env_findings(view: ShellView, rules: list[Rule]) -> Iterator[Finding]:
    """Renames (or reports) environment variables where they are set, unset or expanded."""
    file, script, ruleset = view.file, view.script, view.rules
    sources = [(rule, ruleset.by_code(ShellEnvVarParams.of(rule).from_rule)) for rule in rules]
    sources = [(rule, src) for rule, src in sources if src is not None]
    spans: list[tuple[int, int, str, bool]] = []  # start, end, name, is it where the name is set
    for node in script.nodes("variable_name"):
        start, end = script.span(node)
        spans.append((start, end, file.text[start:end], node.parent is not None and node.parent.type in _SETTING))
    for command in script.nodes("command"):  # `env NAME=value cmd`: names set for cmd
        name = _name_word(command)
        if name is None or name.text.decode("utf-8", "replace").rsplit("/", 1)[-1] != "env":
            continue
        for arg in command.children_by_field_name("argument"):
            key, eq, _ = arg.text.decode("utf-8", "replace").partition("=")
            if arg.type == "word" and eq and key.isidentifier():
                start = script.span(arg)[0]
                spans.append((start, start + len(key), key, True))
            elif not key.startswith("-"):
                break  # the command env runs; its own words are not env's
    for node in script.nodes("string", "raw_string"):  # `bash -c "NAME=0 python x.py"`: a command in quotes
        if not _runs_as_shell_code(node):
            continue  # `echo "export NAME=0 ..."` is text
        start, end = script.span(node)
        for name, offset in assigned_names(file.text[start + 1 : end - 1]):
            spans.append((start + 1 + offset, start + 1 + offset + len(name), name, True))
    for start, end, name, is_set in spans:
        verdict = variable_verdict(name, sources)
        if verdict is None:
            continue
        rule, new, message, severity = verdict
        if new is not None:
            yield file.finding(rule, (start, end), message, replacement=new, subject=name)
        elif is_set:  # a name only expanded or unset where nothing sets it is not reported
            yield file.finding(rule, (start, end), message, subject=name, severity=severity)


_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_RUN_THEIR_ARGUMENTS = frozenset({"eval", "ssh"})


def _runs_as_shell_code(string: Node) -> bool:
    """A quoted argument the shell runs as code: `bash -c "..."`, `eval "..."`, `ssh host "..."`."""
    command = string.parent
    if command is None or command.type != "command":
        return False
    name = _name_word(command)
    program = name.text.decode("utf-8", "replace").rsplit("/", 1)[-1] if name is not None else ""
    if program in _RUN_THEIR_ARGUMENTS:
        return True
    before = string.prev_named_sibling
    return program in _SHELLS and before is not None and before.text == b"-c"


def _name_word(command: Node) -> Node | None:
    name = command.child_by_field_name("name")
    return name.children[0] if name is not None and name.children else name


def command_findings(view: ShellView, rules: list[Rule]) -> Iterator[Finding]:
    """Calls of listed commands (`nvidia-smi ...`), also as arguments of `probes` (`which nvidia-smi`)."""
    file, script = view.file, view.script
    for command in script.nodes("command"):
        words = command_words(command)
        if not words or words[0].value is None:
            continue
        name = words[0].value.rsplit("/", 1)[-1]
        for rule in rules:
            p = ShellCommandParams.of(rule)
            if name in p.commands:
                yield file.finding(rule, script.span(words[0].node), subject=name)
            elif name in p.probes:
                for word in words[1:]:  # `which nvidia-smi`, `watch -n 1 nvidia-smi`
                    if word.value is not None and word.value.rsplit("/", 1)[-1] in p.commands:
                        yield file.finding(rule, script.span(word.node), subject=word.value)


def _flag_values(words: list[Word], flags: set[str]) -> Iterator[tuple[Word, Word | None, str]]:
    """(flag word, value word or None, value text) for each listed flag among the words."""
    for i, word in enumerate(words):
        if word.value is None or not word.value.startswith("-"):
            continue
        name, eq, inline = word.value.partition("=")
        if name not in flags:
            continue
        if eq:
            yield word, None, inline
        elif i + 1 < len(words) and words[i + 1].value is not None and not words[i + 1].value.startswith("-"):
            yield word, words[i + 1], words[i + 1].value
        else:
            yield word, None, ""


def _own_options(words: list[Word], launcher: str) -> list[Word]:
    """The launcher's own words: up to its first positional argument (the script or image),
    after which flags belong to the program it starts (`docker run IMAGE python x.py --gpus 2`).
    A word after a flag without `=` counts as that flag's value (the flags' arities are not
    known, so a boolean flag right before the program lets one more word through)."""
    i = len(launcher.split())
    while i < len(words):
        value = words[i].value
        if value is None or not value.startswith("-"):
            return words[:i]  # a positional word
        if "=" not in value and i + 1 < len(words) and not (words[i + 1].value or "").startswith("-"):
            i += 1  # the flag's value
        i += 1
    return words


def launcher_findings(view: ShellView, rules: list[Rule]) -> Iterator[Finding]:
    """Launcher flags that select devices in CUDA's terms (`deepspeed --include`, `torchrun --nproc_per_node gpu`)."""
    file, script = view.file, view.script
    for command in script.nodes("command"):
        words = command_words(command)
        names = identities(words)
        for rule in rules:
            p = ShellLauncherFlagParams.of(rule)
            launcher = next((name for name in p.launchers if name in names), None)
            if launcher is None:
                continue
            for flag, _, value in _flag_values(_own_options(words, launcher), set(p.flags)):
                wanted = p.values
                if wanted is None or any(fnmatch.fnmatchcase(value, w) for w in wanted):
                    shown = f"{flag.value.partition('=')[0]} {value}".strip()
                    yield file.finding(
                        rule, script.span(flag.node), f"{shown}: {rule.message or rule.summary}", subject=shown
                    )


def _typed(text: str) -> object:
    if text in ("true", "True"):
        return True
    if text in ("false", "False"):
        return False
    return int(text) if text.isdigit() else text


def training_flag_findings(view: ShellView, rules: list[Rule]) -> Iterator[Finding]:
    """Training-config rules (`config-key`, those with `launchers`) applied to the `--key value` flags
    of the commands each rule names (rules naming the same commands are read together)."""
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[Rule]] = {}
    for rule in rules:
        p = ConfigKeyParams.of(rule)
        if not p.launchers:
            continue  # a rule for configs only
        groups.setdefault((p.launchers, p.key_value_launchers), []).append(rule)
    for (launchers, key_value), group in groups.items():
        yield from _flag_findings(view.file, view.script, group, frozenset(launchers + key_value), frozenset(key_value))


def _flag_findings(
    file: TextFile, script: Script, rules: list[Rule], launchers: frozenset[str], key_value: frozenset[str]
) -> Iterator[Finding]:
    """`launchers`: every command read (`key_value`: those of them that also take `key=value`)."""
    for command in script.nodes("command"):
        words = _training_command(command_words(command), launchers)
        if words is None:
            continue
        names = identities(words)
        pairs = []
        for i, word in enumerate(words[1:], 1):
            if word.value is None:
                continue
            start, _ = script.span(word.node)
            inner = start + (1 if word.quote else 0)
            body = word.value.lstrip("-")
            key, eq, value = body.partition("=")
            if word.value.startswith("--") and eq:
                at = inner + len(word.value) - len(value)
                pairs.append(((key.replace("-", "_"),), Scalar(_typed(value), at, at + len(value), "")))
            elif word.value.startswith("--"):
                nxt = words[i + 1] if i + 1 < len(words) else None
                if nxt is not None and nxt.value is not None and not nxt.value.startswith("-"):
                    vs, ve = script.span(nxt.node)
                    pairs.append(((body.replace("-", "_"),), Scalar(_typed(nxt.value), vs, ve, nxt.quote)))
                else:
                    pairs.append(((body.replace("-", "_"),), Scalar(True, *script.span(word.node), "flag")))
            elif eq and names & key_value and key.isidentifier():
                at = inner + len(key) + 1
                pairs.append(((key,), Scalar(_typed(value), at, at + len(value), "")))
        for hit in match_pairs(pairs, "training", rules):
            yield file.finding(
                hit.rule,
                (hit.value.start, hit.value.end),
                hit_message(hit),
                replacement=hit.replacement,
                subject=hit.key,
            )


def _training_command(words: list[Word], launchers: frozenset[str]) -> list[Word] | None:
    """The words of a command that is one of `launchers` (from its program on), also one that
    a process launcher starts (`mpirun ... -x NCCL_IB_DISABLE=1 python train.py ...`); None for others."""
    if identities(words) & launchers:
        return words
    if not words or words[0].value is None or posixpath.basename(words[0].value) not in _PROCESS_LAUNCHERS:
        return None
    for i in range(1, len(words)):
        if words[i].value is not None and not words[i].value.startswith("-") and identities(words[i:]) & launchers:
            return words[i:]
    return None


def setup_findings(view: ShellView, rules: list[Rule]) -> Iterator[Finding]:
    """One finding at the first launch of a script that does not set up the vendor environment."""
    file, script = view.file, view.script
    for rule in rules:
        p = ShellEnvSetupParams.of(rule)
        if any(marker in file.text for marker in p.markers):
            continue
        for command in script.nodes("command"):
            words = command_words(command)
            if identities(words) & set(p.launchers):
                yield file.finding(rule, script.span(words[0].node))
                break


def pip_install_findings(view: ShellView, rules: list[Rule]) -> Iterator[Finding]:
    """What `pip install` and `conda install` lines install, reviewed like a requirements file
    or a conda environment (reported: a command line is not a place porter edits packages in)."""
    file, script = view.file, view.script
    policy = RequirementPolicy.build(view.rules.rules, view.rules.version)
    if policy is None:
        return
    for command in script.nodes("command"):
        words = command_words(command)
        literal = [w for w in words if w.value is not None]  # `$PKG` is unknown here
        reviewed = install_verdicts(policy, [w.value for w in literal])
        if not reviewed:
            continue
        cursor = 0
        for word, verdicts in reviewed:
            at = next((w for w in literal[cursor:] if w.value == word), None)
            if at is None:
                continue
            cursor = literal.index(at) + 1
            start = script.span(at.node)[0] + len(at.quote)
            yield from requirement_findings(policy, file.path, file.index, start, start, None, verdicts)
