"""porter never writes an API that is not there (DESIGN.md, Rules are data).

Every name a rule's `replace` emits must be in the target's API table as supported or
partial (its own entry, or the counterpart of the CUDA entry), for each torch version the
rule claims (`versions`; empty means every table of the target):

- qualified-name: an exact rename (`torch.cuda.ipc_collect` -> `torch.mlu.ipc_collect`)
  checks the new name; a namespace rename (`torch.cuda` -> `torch.mlu`) checks the
  renamed form of every supported or partial table entry below the old name that this
  rule (not a more specific one) rewrites;
- method: `.cuda()` -> `.mlu()` checks `torch.Tensor.mlu` and `torch.nn.Module.mlu` (each
  where the table lists the CUDA method);
- env-var: checked in the tables that list environment variables (the vendor lists them
  for torch 2.1 only), with prefix renames (`TORCH_NCCL_` -> `TORCH_CNCL_`) applied to each
  supported or partial variable.
"""

from __future__ import annotations

import pytest

from porter.tables.optables import ApiTable, available_versions, load_api_table
from porter.rules import TARGETS, Rule, load_rules

_USABLE = ("supported", "partial")


def _exists(table: ApiTable, name: str) -> bool:
    if table.lookup(name).status in _USABLE:
        return True
    return any(e.counterpart == name and e.status in _USABLE for e in table.entries.values())


def _versions(rule: Rule) -> list[str]:
    return list(rule.versions) or available_versions(rule.target)


def _qualified_names(rule: Rule, table: ApiTable, renames: dict[str, str]) -> list[str]:
    """The names this rule would write for the APIs the table lists."""
    names: list[str] = []
    for old, new in rule.params.replace.items():
        if old in table.entries or not any(k.startswith(old + ".") for k in table.entries):
            names.append(new)
        for key, entry in table.entries.items():
            if key.startswith(old + ".") and entry.status in _USABLE:
                if _most_specific(key, renames) == old:
                    names.append(new + key[len(old) :])
    return names


def _most_specific(key: str, renames: dict[str, str]) -> str | None:
    parts = key.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in renames:
            return prefix
    return None


def _emitted(rule: Rule, table: ApiTable, renames: dict[str, str]) -> list[str]:
    if rule.kind == "qualified-name":
        return _qualified_names(rule, table, renames)
    if rule.kind == "method":  # for each owner the table lists the old method on
        old, new = rule.params.attribute, rule.params.replace
        owners = [o for o in ("torch.Tensor", "torch.nn.Module") if f"{o}.{old}" in table.entries]
        return [f"{o}.{new}" for o in owners] or [f"torch.Tensor.{new}"]
    if rule.kind == "env-var":
        if not any(k.isupper() for k in table.entries):
            return []  # this table does not list environment variables
        names = []
        for old, new in rule.params.replace.items():
            if old.endswith("_"):  # a prefix: every usable variable under it
                names += [
                    new + k[len(old) :] for k, e in table.entries.items() if k.startswith(old) and e.status in _USABLE
                ]
            else:
                names.append(new)
        return names
    return []


# An API the tables lack is allowed only with a source in the rule's own data (`api_sources`,
# shown by `porter rules CODE`), never through an exception list in a test.


def _cases():
    for target in TARGETS:
        for version in available_versions(target):
            rules = [
                r
                for r in load_rules(target).rules
                if getattr(r.params, "replace", None) and (not r.versions or version in r.versions)
            ]
            renames = {old: new for r in rules if r.kind == "qualified-name" for old, new in r.params.replace.items()}
            for rule in rules:
                if rule.kind in ("qualified-name", "method", "env-var"):
                    yield pytest.param(rule, version, renames, id=f"{rule.code}[{target}-{version}]")


CASES = list(_cases())


def _missing(rule: Rule, version: str, renames: dict[str, str]) -> set[str]:
    table = load_api_table(rule.target, version)
    return {
        name for name in _emitted(rule, table, renames) if not _exists(table, name) and name not in rule.api_sources
    }


@pytest.mark.parametrize("rule,version,renames", CASES)
def test_rule_emits_only_apis_the_table_has(rule: Rule, version: str, renames: dict[str, str]):
    missing = _missing(rule, version, renames)
    assert not missing, (
        f"{rule.code} ({rule.source}) writes APIs {rule.target} {version} does not have: {sorted(missing)}"
    )


def test_api_sources_name_only_what_the_tables_lack():
    """A source in the rule data is for an API the tables lack: once a table lists it, the
    entry must go (so the table, the better source, is what porter shows)."""
    for param in CASES:
        rule, version, renames = param.values
        table = load_api_table(rule.target, version)
        listed = [name for name in rule.api_sources if _exists(table, name)]
        assert not listed, f"{rule.code}: {listed} are in the {version} table now; remove them from api_sources"


def test_a_rename_to_a_missing_api_is_caught():
    from dataclasses import replace

    rule = load_rules("mlu").by_code("PRT103")
    bogus = replace(rule, params=rule.params.with_changes(replace={"torch.cuda.CUDAGraph": "torch.mlu.NoSuchGraph"}))
    assert "torch.mlu.NoSuchGraph" in _missing(bogus, "2.4", {"torch.cuda.CUDAGraph": "torch.mlu.NoSuchGraph"})
