"""The log of changed clusters a ClusterGroup's roll-up reads: each cluster once, at its latest
change, per workspace, until every reader took it in."""

from __future__ import annotations

import pytest

from bundler.manager.memo.cluster_changes import ClusterChanges


@pytest.mark.parametrize(
    ("recorded", "seen", "changed"),
    [
        pytest.param([], 0, [], id="nothing recorded"),
        pytest.param(["ws/a", "ws/b"], 0, ["ws/b", "ws/a"], id="newest first"),
        pytest.param(["ws/a", "ws/b", "ws/a"], 0, ["ws/a", "ws/b"], id="a cluster once"),
        pytest.param(["ws/a", "ws/b", "ws/c"], 1, ["ws/c", "ws/b"], id="after what was seen"),
        pytest.param(["ws/a", "ws/b", "ws/a"], 2, ["ws/a"], id="seen, then changed again"),
        pytest.param(["ws/a", "other/x"], 0, ["ws/a"], id="its workspace only"),
    ],
)
def test_since_gives_the_clusters_changed_after_a_number(
    recorded: list[str], seen: int, changed: list[str]
) -> None:
    changes = ClusterChanges()
    for cluster_ref in recorded:
        changes.record(cluster_ref.partition("/")[0], cluster_ref)
    assert changes.since("ws", seen) == (changed, len(recorded))
    assert changes.latest() == len(recorded)


def test_forgetting_what_was_taken_in_keeps_the_later_changes() -> None:
    changes = ClusterChanges()
    for cluster_ref in ("ws/a", "ws/b", "ws/c"):
        changes.record("ws", cluster_ref)
    changes.forget_through("ws", 2)
    changes.forget_through("elsewhere", 3)
    assert changes.since("ws", 0) == (["ws/c"], 3)
    changes.record("ws", "ws/a")
    assert changes.since("ws", 3) == (["ws/a"], 4)


def test_a_reader_behind_what_a_full_log_forgot_is_told_to_walk() -> None:
    changes = ClusterChanges(max_changes=2)
    for cluster_ref in ("ws/a", "ws/b", "ws/c"):
        changes.record("ws", cluster_ref)
    assert changes.since("ws", 0) is None
    assert changes.since("ws", 1) == (["ws/c", "ws/b"], 3)
    assert changes.since("other", 0) == ([], 3)
