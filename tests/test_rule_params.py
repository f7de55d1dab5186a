"""Each kind's parameters are a typed, frozen object (porter/rules/params.py, kinds.py)."""

import dataclasses

import pytest

from porter.rules import load_rules
from porter.rules.kinds import KINDS, EnvVarParams, MethodParams, QualifiedNameParams


def test_a_table_becomes_the_kinds_object_with_arrays_as_tuples():
    p = QualifiedNameParams.from_table({"match": ["torch.cuda"], "replace": {"torch.cuda": "torch.mlu"}})
    assert p.match == ("torch.cuda",) and p.replace == {"torch.cuda": "torch.mlu"}
    assert p.exact is False and p.unless_pinned is None and p.unless_called_with == {}


def test_a_misspelt_or_missing_field_is_an_error_not_a_none():
    with pytest.raises(TypeError, match="no field mach"):
        QualifiedNameParams(mach=("torch.cuda",))  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="needs match"):
        QualifiedNameParams()  # type: ignore[call-arg]
    with pytest.raises(AttributeError):
        QualifiedNameParams(match=("x",)).mach  # type: ignore[attr-defined]  # noqa: B018


def test_the_object_is_frozen_and_a_default_table_is_not_shared():
    a, b = EnvVarParams(names=("A",)), EnvVarParams(names=("B",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.names = ("C",)  # type: ignore[misc]
    assert a.replace is not b.replace
    assert a.with_changes(names=("C",)).names == ("C",) and a.names == ("A",)


def test_a_matcher_reading_another_kinds_rule_is_told_which():
    rule = load_rules("mlu").by_code("PRT101")
    assert QualifiedNameParams.of(rule).match
    with pytest.raises(TypeError, match="PRT101 is of kind 'qualified-name'"):
        MethodParams.of(rule)


def test_every_shipped_rule_holds_its_kinds_class():
    for target in ("mlu", "hip"):
        for rule in load_rules(target).rules:
            assert isinstance(rule.params, KINDS[rule.kind].params), rule.code


def test_the_general_reporting_options_read_the_same_on_every_kind():
    rules = load_rules("mlu")
    assert rules.by_code("PRT418").params.reporting.once_per_tree is not None
    folded = [r.code for r in rules.rules if r.params.reporting.once_per_subject_in_tree]
    assert folded, "some rule folds per subject across the tree"
    assert MethodParams(attribute="cuda").reporting.once_per_file is False  # a kind without the option


def test_a_matcher_names_a_declared_kind_or_fails_when_its_table_is_built():
    from porter.filetypes.shell import SHELL_KINDS
    from porter.python.kinds import PYTHON_KINDS
    from porter.python.kinds.base import PythonKind
    from porter.rules.kinds import Matcher

    with pytest.raises(ValueError, match="no rule kind 'shell-comand'"):
        Matcher("shell-comand", lambda view, rules: [])
    with pytest.raises(ValueError, match="no rule kind 'qualified_name'"):
        PythonKind("qualified_name", screen=lambda rules: set())
    for table in ([k.name for k in PYTHON_KINDS], [m.kind for m in SHELL_KINDS]):
        assert len(set(table)) == len(table) and set(table) <= KINDS.keys()


def test_what_a_project_differs_in_is_rule_data_the_loader_checks(tmp_path):
    # The commands whose flags a config-key rule reads (once TRAINERS in the shell kind's code).
    from porter.rules import RuleError
    from porter.rules.kinds import ConfigKeyParams
    from porter.rules.load import load_rule_files

    read_in_scripts = [r for r in load_rules("mlu").of_kind("config-key") if ConfigKeyParams.of(r).launchers]
    assert read_in_scripts and all("llamafactory-cli" in ConfigKeyParams.of(r).launchers for r in read_in_scripts)
    bad = tmp_path / "bad.toml"
    bad.write_text(
        '[[rule]]\ncode = "PRT801"\nname = "x"\nkind = "config-key"\nsummary = "s"\nwhy = "w"\n'
        'severity = "warning"\napplicability = "manual"\nkeys = ["bf16"]\nconfigs = ["training"]\n'
        'launchers = "torchrun"\nexamples = [{ before = "bf16: true" }]\n'
    )
    with pytest.raises(RuleError, match="key 'launchers' must be list"):
        load_rule_files([bad], "mlu", project=True)
