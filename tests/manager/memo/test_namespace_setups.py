"""Clusters waiting for their namespace: a workspace waits while any of its Clusters does."""

from __future__ import annotations

import pytest

from bundler.manager.memo.namespace_setups import Setups
from bundler.manager.work import Work
from bundler.runtime.key import Key

A, B, ELSEWHERE = Key("ws", "a"), Key("ws", "b"), Key("other", "c")


@pytest.mark.parametrize(
    ("done", "waiting"),
    [((), True), ((A,), True), ((A, B), False), ((ELSEWHERE,), True), ((B, B, A), False)],
    ids=["none-done", "one-of-two", "both", "another-workspace", "repeated"],
)
def test_a_workspace_waits_while_one_of_its_clusters_does(
    done: tuple[Key, ...], waiting: bool
) -> None:
    setups, work = Setups(), Work()
    setups.expect(A)
    setups.expect(B)
    for cluster in done:
        setups.done(work, cluster)
    assert setups.waiting_in("ws") is waiting
    assert not setups.waiting_in("other")
