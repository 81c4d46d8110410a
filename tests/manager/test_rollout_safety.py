"""Acceptance for bundler's rollout safety rules, the manager over real HTTP: offline clusters
never block a rollout."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.resources import BUNDLE
from bundler.apiserver import ApiServer
from bundler.kube.store import KubeStore
from bundler.runtime.clock import ManualClock
from tests.builders import WS, bundle, cluster
from tests.manager.conftest import (
    StartManager,
    check_in,
    create_world,
    deployment_of,
    report,
    settle_remote,
    status_of,
    world,
)
from tests.manager.test_http import admin, connect, remote, server  # noqa: F401

OFFLINE_AFTER = 300.0
ALL: list[dict[str, Any]] = [{"clusterSelector": {}}]
NAMES = ("a", "b", "c")


def promoted(store: Any) -> list[str]:
    """The clusters whose deployment runs values v=2 now (not only staged)."""
    return [
        n
        for n in NAMES
        if deployment_of(store, n)["spec"]["options"]["helm"].get("values") == {"v": 2}
    ]


# (offlineClusters, clusters promoted while b and c are offline)
OFFLINE_CASES = [
    ("default-ignores-offline-clusters", None, ["a", "b", "c"]),
    ("block-keeps-fleets-behaviour", "Block", ["a"]),
]


@pytest.mark.parametrize(
    ("offline_clusters", "expected"),
    [c[1:] for c in OFFLINE_CASES],
    ids=[c[0] for c in OFFLINE_CASES],
)
def test_offline_clusters_do_not_block_a_rollout(
    server: ApiServer,  # noqa: F811
    admin: KubeStore,  # noqa: F811
    remote: KubeStore,  # noqa: F811
    start_manager: StartManager,
    clock: ManualClock,
    offline_clusters: str | None,
    expected: list[str],
) -> None:
    strategy: dict[str, Any] = {"maxUnavailable": 1}
    if offline_clusters is not None:
        strategy["offlineClusters"] = offline_clusters
    create_world(admin, world(*(cluster(n) for n in NAMES), bundle(ALL, rolloutStrategy=strategy)))
    manager = start_manager(remote, offline_after=OFFLINE_AFTER)
    for name in NAMES:
        check_in(admin, clock, name)
    settle_remote(manager, server.store)
    for name in NAMES:
        report(admin, name)
    settle_remote(manager, server.store)
    clock.advance(OFFLINE_AFTER + 2)
    check_in(admin, clock, "a")
    settle_remote(manager, server.store)
    assert status_of(server.store, BUNDLE, "app")["summary"]["offline"] == 2
    admin.patch(BUNDLE, "app", {"spec": {"helm": {"values": {"v": 2}}}}, WS)
    settle_remote(manager, server.store)
    assert promoted(server.store) == expected
