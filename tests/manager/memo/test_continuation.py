"""What a pass leaves is kept only when nothing it read changed since it started reading."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bundler.manager.memo.continuation import CLUSTER_LOG, Continuations, Leftover
from bundler.manager.memo.outcomes import Outcome

BUNDLE = "ws/app"


def leftover(started: int) -> Leftover:
    return Leftover(
        started,
        ("uid", 1),
        Outcome(1, frozenset()),
        None,
        rows={},
        to_create=("ws/c1",),
        unwritable=frozenset(),
        held=frozenset(),
        targets=1,
    )


def _nothing(c: Continuations) -> None:
    return None


@pytest.mark.parametrize(
    ("during", "kept"),
    [
        pytest.param(_nothing, True, id="nothing-changed"),
        pytest.param(lambda c: c.invalidate(BUNDLE), False, id="bundle-changed"),
        pytest.param(lambda c: c.invalidate("ws/other"), True, id="other-bundle-changed"),
        pytest.param(lambda c: c.invalidate_workspace("ws"), False, id="workspace-changed"),
        pytest.param(lambda c: c.invalidate_workspace("other"), True, id="other-workspace"),
        pytest.param(lambda c: c.invalidate_all(), False, id="resync"),
    ],
)
def test_a_leftover_is_kept_only_when_nothing_changed_while_planning(
    during: Callable[[Continuations], None], kept: bool
) -> None:
    continuations = Continuations()
    started = continuations.begin()
    during(continuations)
    continuations.keep(BUNDLE, leftover(started))
    assert (continuations.take(BUNDLE) is not None) is kept


def test_clusters_changed_while_planning_are_planned_again() -> None:
    continuations = Continuations()
    started = continuations.begin()
    continuations.cluster_changed("ws", "ws/c2")
    continuations.keep(BUNDLE, leftover(started))
    continuations.cluster_changed("ws", "ws/c3")
    continuations.cluster_changed("other", "other/c4")
    taken = continuations.take(BUNDLE)
    assert taken is not None
    assert taken.changed == {"ws/c2", "ws/c3"}


def test_a_pass_older_than_the_cluster_changes_remembered_keeps_nothing() -> None:
    continuations = Continuations()
    started = continuations.begin()
    for n in range(CLUSTER_LOG + 1):
        continuations.cluster_changed("ws", f"ws/c{n}")
    continuations.keep(BUNDLE, leftover(started))
    assert continuations.take(BUNDLE) is None


def test_creations_left_are_seen_per_bundle_and_workspace() -> None:
    continuations = Continuations()
    continuations.keep(BUNDLE, leftover(continuations.begin()))
    assert continuations.creating(BUNDLE)
    assert continuations.creating_in("ws")
    assert not continuations.creating_in("other")
    continuations.take(BUNDLE)
    assert not continuations.creating_in("ws")
