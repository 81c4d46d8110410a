"""The agent's token Secret: the manager creates and repairs what it owns (type, annotation,
labels) and leaves what Kubernetes' token controller writes (data, the uid annotation) alone."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.resources import SECRET
from bundler.core.agent.identity import AGENT_TOKEN_SECRET
from bundler.core.naming import cluster_namespace
from bundler.runtime.clock import ManualClock
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj
from tests.support.builders import WS, cluster
from tests.support.manager.world import CountingStore, StartManager, create_world, settle, world

NS = cluster_namespace(WS, "a")
ACCOUNT = "kubernetes.io/service-account.name"
ACCOUNT_UID = "kubernetes.io/service-account.uid"
TOKEN_DATA = {"token": "c2VjcmV0LXRva2Vu", "ca.crt": "Y2E=", "namespace": "bnM="}


def token_secret(store: MemoryStore) -> Obj:
    return store.get(SECRET, AGENT_TOKEN_SECRET, NS)


def fill_token(store: MemoryStore) -> None:
    """What Kubernetes' token controller does to the Secret."""
    patch = {"metadata": {"annotations": {ACCOUNT_UID: "sa-uid"}}, "data": TOKEN_DATA}
    store.patch(SECRET, AGENT_TOKEN_SECRET, patch, NS)


@pytest.fixture
def counting(store: MemoryStore) -> CountingStore:
    create_world(store, world(cluster("a")))
    return CountingStore(store)


def test_token_secret_is_created_for_the_agent_service_account(
    store: MemoryStore, counting: CountingStore, start_manager: StartManager
) -> None:
    settle(start_manager(counting))
    secret = token_secret(store)
    assert secret["type"] == "kubernetes.io/service-account-token"
    assert secret["metadata"]["annotations"] == {ACCOUNT: "bundler-agent"}
    assert secret["metadata"]["labels"]["bundler.dev/agent-token"] == "true"
    assert "data" not in secret


def test_filled_token_is_not_fought_over(
    store: MemoryStore, counting: CountingStore, start_manager: StartManager, clock: ManualClock
) -> None:
    manager = start_manager(counting, resync_period=60.0)
    settle(manager)
    counting.reset()
    fill_token(store)
    settle(manager)
    manager.resync()
    settle(manager)
    clock.advance(61.0)
    settle(manager)
    assert counting.total() == 0
    secret = token_secret(store)
    assert secret["data"] == TOKEN_DATA
    assert secret["metadata"]["annotations"] == {ACCOUNT: "bundler-agent", ACCOUNT_UID: "sa-uid"}


def test_deleted_token_secret_is_created_again(
    store: MemoryStore, counting: CountingStore, start_manager: StartManager
) -> None:
    manager = start_manager(counting)
    settle(manager)
    fill_token(store)
    store.delete(SECRET, AGENT_TOKEN_SECRET, NS)
    settle(manager)
    assert "data" not in token_secret(store)


@pytest.mark.parametrize(
    ("patch", "recreated"),
    [
        ({"metadata": {"labels": {"bundler.dev/cluster-name": None}}}, False),
        ({"metadata": {"labels": {"team": "platform"}}}, False),
        ({"type": "Opaque"}, True),
        ({"metadata": {"annotations": {ACCOUNT: "default"}}}, True),
    ],
    ids=["label-removed", "label-added", "type-changed", "account-changed"],
)
def test_token_secret_changed_by_hand_is_repaired(
    store: MemoryStore,
    counting: CountingStore,
    start_manager: StartManager,
    patch: dict[str, Any],
    recreated: bool,
) -> None:
    manager = start_manager(counting)
    settle(manager)
    fill_token(store)
    before = token_secret(store)
    store.patch(SECRET, AGENT_TOKEN_SECRET, patch, NS)
    settle(manager)
    after = token_secret(store)
    assert after["type"] == "kubernetes.io/service-account-token"
    assert after["metadata"]["annotations"][ACCOUNT] == "bundler-agent"
    assert after["metadata"]["labels"]["bundler.dev/cluster-name"] == "a"
    same_object = after["metadata"]["uid"] == before["metadata"]["uid"]
    assert same_object is not recreated
    # Recreated, the Secret waits for a new token; repaired in place, it keeps the one it has.
    assert after.get("data") == (None if recreated else TOKEN_DATA)
