"""A remote-mode Cluster has no pull agent identity: against an API server that enforces RBAC, the
manager (under exactly its rules) creates the identity in pull mode only, removes it when the
Cluster moves to remote mode with no pull agent to hand over, makes it again back in pull mode, and
deletes nothing it did not make. The handover with a running pull agent is in
tests/agent/test_handover.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import CLUSTER, NAMESPACE, SECRET, SERVICE_ACCOUNT
from bundler.core.agent.identity import (
    AGENT_NAME,
    AGENT_TOKEN_MARK,
    AGENT_TOKEN_SECRET,
    LABEL_AGENT_TOKEN,
    agent_identity,
    identity_labels,
)
from bundler.core.labels import LABEL_MANAGED_BY, MANAGED_BY_BUNDLER
from bundler.core.naming import cluster_namespace
from tests.support.agent.http_fleet import HttpFleet, eventually
from tests.support.builders import WS, cluster
from tests.support.identities import MANAGER_USER
from tests.support.stores import exists

NAME = "edge-1"
NS = cluster_namespace(WS, NAME)
REMOTE = {"agentMode": "remote", "kubeConfigSecret": f"{NAME}-kubeconfig"}
PULL = {"agentMode": "pull"}
EVERY_OBJECT = len(agent_identity(WS, NAME))


class World:
    def __init__(self, fleet: HttpFleet) -> None:
        self.fleet = fleet
        self.store = fleet.management.store

    def add(self, spec: dict[str, Any]) -> None:
        self.store.create(CLUSTER, cluster(NAME, **spec).to_wire())

    def switch(self, spec: dict[str, Any]) -> None:
        self.store.patch(CLUSTER, NAME, {"spec": spec}, WS)

    def identity(self) -> int:
        """How many of the pull agent identity's objects exist."""
        return sum(exists(self.store, o.res, o.name, o.namespace) for o in agent_identity(WS, NAME))

    def set_up(self) -> bool:
        status = self.store.get(CLUSTER, NAME, WS).get("status") or {}
        return status.get("namespace") == NS and exists(self.store, NAMESPACE, NS, None)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    fleet = HttpFleet(tmp_path)
    try:
        fleet.start(agents=False)
        yield World(fleet)
    finally:
        fleet.stop()


@pytest.mark.parametrize(
    ("first", "then", "before", "after"),
    [
        (PULL, PULL, EVERY_OBJECT, EVERY_OBJECT),
        (REMOTE, REMOTE, 0, 0),
        (PULL, REMOTE, EVERY_OBJECT, 0),
        (REMOTE, PULL, 0, EVERY_OBJECT),
    ],
    ids=["pull-mode", "remote-mode", "pull-to-remote", "remote-to-pull"],
)
def test_the_pull_identity_exists_in_pull_mode_only(
    world: World, first: dict[str, Any], then: dict[str, Any], before: int, after: int
) -> None:
    world.add(first)
    eventually(lambda: world.set_up() and world.identity() == before, f"{before} objects")
    # No pull agent ever reported: nothing to wait for before the identity goes.
    world.switch(then)
    eventually(lambda: world.identity() == after, f"{after} objects after the switch")
    assert world.set_up()
    assert world.fleet.management.denials(MANAGER_USER) == []


@pytest.mark.parametrize(
    "labels",
    [
        {},
        {LABEL_MANAGED_BY: MANAGED_BY_BUNDLER},
        {**identity_labels(WS, "other"), LABEL_AGENT_TOKEN: AGENT_TOKEN_MARK},
    ],
    ids=["no-labels", "managed-by-only", "another-clusters-labels"],
)
def test_an_object_the_manager_did_not_make_is_never_deleted(
    world: World, labels: dict[str, str]
) -> None:
    world.add(REMOTE)
    eventually(world.set_up, "the cluster namespace")
    lookalike = {"metadata": {"name": AGENT_TOKEN_SECRET, "namespace": NS, "labels": labels}}
    world.store.create(SECRET, {**lookalike, "type": "Opaque"})
    # A ServiceAccount as the manager makes it: removed, after the token Secret's place was seen.
    account = {"name": AGENT_NAME, "namespace": NS, "labels": identity_labels(WS, NAME)}
    world.store.create(SERVICE_ACCOUNT, {"metadata": account})
    eventually(lambda: world.identity() == 1, "the manager's ServiceAccount removed")
    kept = world.store.get(SECRET, AGENT_TOKEN_SECRET, NS)
    assert (kept["metadata"].get("labels") or {}) == labels
