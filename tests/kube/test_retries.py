"""Retries against injected failures: what is retried, how often, and where it stops."""

from __future__ import annotations

import socket

import pytest

from bundler.api.resources import BUNDLE, NAMESPACE
from bundler.apiserver import ApiServer, Verb
from bundler.kube.retry import RetryPolicy
from bundler.kube.store import KubeOptions, KubeStore
from bundler.store.errors import Conflict, Unavailable
from tests.support.kube.store_client import FAST, bundle

ATTEMPTS = FAST.retry.attempts


@pytest.mark.parametrize("code", [429, 500, 502, 503, 504], ids=["429", "500", "502", "503", "504"])
def test_transient_failure_is_retried(server: ApiServer, store: KubeStore, code: int) -> None:
    store.create(BUNDLE, bundle("a"))
    server.reset_counts()
    server.inject_failure(code, verb=Verb.GET, resource=BUNDLE, count=ATTEMPTS - 1)
    assert store.get(BUNDLE, "a", "ws")["metadata"]["name"] == "a"
    assert server.request_counts()[Verb.GET] == ATTEMPTS


def test_retry_after_is_waited_for(server: ApiServer, store: KubeStore) -> None:
    server.inject_failure(429, verb=Verb.LIST, resource=NAMESPACE, retry_after=1)
    assert {"ws", "other"} <= {n["metadata"]["name"] for n in store.list(NAMESPACE).items}
    assert server.request_counts()[Verb.LIST] == 2


def test_retry_after_beyond_the_budget_gives_up_at_once(
    server: ApiServer, store: KubeStore
) -> None:
    server.inject_failure(429, verb=Verb.LIST, resource=NAMESPACE, retry_after=3600)
    with pytest.raises(Unavailable, match="injected failure 429"):
        store.list(NAMESPACE)
    assert server.request_counts()[Verb.LIST] == 1


def test_persistent_failure_ends_unavailable_after_the_bound(
    server: ApiServer, store: KubeStore
) -> None:
    server.inject_failure(503, verb=Verb.GET, count=100)
    with pytest.raises(Unavailable, match="still failing after retries") as raised:
        store.get(BUNDLE, "a", "ws")
    assert "ws/a" in str(raised.value)
    assert server.request_counts()[Verb.GET] == ATTEMPTS


def test_writes_are_retried_too(server: ApiServer, store: KubeStore) -> None:
    created = store.create(BUNDLE, bundle("a"))
    server.inject_failure(500, verb=Verb.UPDATE, resource=BUNDLE)
    created["spec"]["paused"] = True
    assert store.update(BUNDLE, created)["spec"]["paused"] is True
    assert server.request_counts()[Verb.UPDATE] == 2


def test_injected_conflict_is_not_retried(server: ApiServer, store: KubeStore) -> None:
    created = store.create(BUNDLE, bundle("a"))
    server.inject_failure(409, verb=Verb.UPDATE, resource=BUNDLE)
    with pytest.raises(Conflict):
        store.update(BUNDLE, created)
    assert server.request_counts()[Verb.UPDATE] == 1


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_dead_port_is_unavailable_within_the_bound() -> None:
    kubeconfig = {
        "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{free_port()}"}}],
        "users": [{"name": "u", "user": {}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    options = KubeOptions(retry=RetryPolicy(attempts=2, initial_delay=0.01, budget=1.0))
    with KubeStore.from_kubeconfig_dict(kubeconfig, options=options) as store:
        with pytest.raises(Unavailable, match="connection failed"):
            store.get(BUNDLE, "a", "ws")
        with pytest.raises(Unavailable, match="connection failed"):
            store.create(BUNDLE, bundle("a"))
