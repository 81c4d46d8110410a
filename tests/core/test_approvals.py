"""The approval annotation: what it approves, for which generation, and how approvals add up."""

from __future__ import annotations

import pytest

from bundler.api.bundle import Approval
from bundler.core.approvals import APPROVE, Approved, approval_value, approved, needs_approval

APPROVAL_VALUES = [
    ("every-partition", "7", Approved(every=True)),
    (
        "named",
        '{"generation": 7, "partitions": ["rest"]}',
        Approved(partitions=frozenset({"rest"})),
    ),
    ("an-older-generation", "6", Approved()),
    ("not-json", "{yes", Approved()),
    ("generation-not-a-number", '{"generation": "7", "partitions": []}', Approved()),
]


@pytest.mark.parametrize(
    ("value", "expected"), [c[1:] for c in APPROVAL_VALUES], ids=[c[0] for c in APPROVAL_VALUES]
)
def test_the_approval_annotation(value: str, expected: Approved) -> None:
    assert approved({APPROVE: value}, 7) == expected


def test_approval_values_add_up_within_a_generation() -> None:
    first = approval_value(None, 7, "canary")
    assert approved({APPROVE: first}, 7) == Approved(partitions=frozenset({"canary"}))
    both = approval_value(first, 7, "rest")
    assert approved({APPROVE: both}, 7) == Approved(partitions=frozenset({"canary", "rest"}))
    assert approval_value(both, 8, "rest") == '{"generation":8,"partitions":["rest"]}'
    assert approval_value(both, 7, None) == "7"
    assert approval_value("7", 7, "rest") == "7"


def test_which_partitions_need_approval() -> None:
    named = Approval(partitions=["rest"])
    assert needs_approval(named, "rest", manual=True)
    assert not needs_approval(named, "canary", manual=True)
    assert not needs_approval(named, "rest", manual=False)  # an automatic partition of that name
    assert needs_approval(Approval(), "all-1", manual=False)
    assert not needs_approval(None, "rest", manual=True)
