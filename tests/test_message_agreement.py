"""A finding's message and its suggestion agree (issue 28): a note that says there is nothing
to change here (the table expects the API to work, the code is a test of a CUDA-only stack,
the branch is kept for CUDA, another vendor's code, an import nothing uses) must not carry
the rule's advice to replace, remove or port it. torch.manual_seed was reported with "expect
it to work" and "Replace it with a supported API".

Checked on every Python fixture of both targets with every rule selected, so that notes
outside the default set are read too.
"""

from __future__ import annotations

import re

import pytest

from fixture_cases import discover
from porter.engine.pipeline import check_bytes
from porter.rules import TARGETS, ActiveRules, Selection, load_rules

# What a note says when there is nothing to change where it points.
NOTHING_TO_DO = re.compile(
    r"expect it to work|nothing in it to port|never runs on|kept for CUDA|"
    r"never used at run time|runs on the host",
    re.IGNORECASE,
)
# What a suggestion says when it asks for a change there.
CHANGE = re.compile(r"^(?:replace|remove|drop|port|rename|require|raise|install|load|train|qlora|use)\b", re.IGNORECASE)

CASES = [c for c in discover() if c.path.suffix == ".py" and ".out." not in c.path.name]


@pytest.mark.parametrize("target", TARGETS)
def test_a_note_with_nothing_to_do_asks_for_no_change(target):
    everything = ActiveRules(load_rules(target), Selection(None, ("ALL",)))
    disagree = []
    for case in (c for c in CASES if c.target == target):
        for f in check_bytes(case.path.name, case.path.read_bytes(), everything).findings:
            if NOTHING_TO_DO.search(f.message) and f.suggestion and CHANGE.search(f.suggestion):
                disagree.append(f"{case.id}:{f.line} {f.rule}: {f.message[:80]!r} / {f.suggestion[:60]!r}")
    assert not disagree, "\n".join(disagree)
