"""KubeStore reads lists in pages as client-go's pager does, counted at the server over HTTP: a
list of N objects arrives in ceil(N/limit) responses, informers list and relist the same way, and
a continue token that expired restarts the list as one full list."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bundler.api.resources import BUNDLE, NAMESPACE, Verb
from bundler.apiserver import ApiServer
from bundler.kube.store import KubeOptions, KubeStore
from bundler.runtime.clock import SystemClock
from bundler.runtime.informer import Informer
from bundler.runtime.timers import Timers
from tests.support.kube.store_client import FAST, PATIENCE


def paged(size: int) -> KubeOptions:
    return KubeOptions(retry=FAST.retry, timeouts=FAST.timeouts, page_size=size)


def fill(server: ApiServer, count: int) -> list[str]:
    names = [f"b{i:03d}" for i in range(count)]
    for name in names:
        server.store.create(
            BUNDLE, {"metadata": {"name": name, "namespace": "ws"}, "spec": {"helm": {}}}
        )
    return names


def lists(server: ApiServer) -> int:
    return server.request_counts()[Verb.LIST.value]


@pytest.mark.parametrize(
    ("objects", "page_size"),
    [
        pytest.param(0, 2, id="empty-one-response"),
        pytest.param(1, 2, id="under-a-page"),
        pytest.param(4, 2, id="exact-pages"),
        pytest.param(7, 2, id="last-page-short"),
        pytest.param(7, 500, id="default-size-one-response"),
        pytest.param(12, 5, id="three-pages"),
    ],
)
def test_a_list_arrives_in_ceil_n_over_limit_responses(
    server: ApiServer, connect: Callable[..., KubeStore], objects: int, page_size: int
) -> None:
    names = fill(server, objects)
    store = connect(paged(page_size))
    server.reset_counts()
    listed = store.list(BUNDLE, "ws")
    assert [o["metadata"]["name"] for o in listed.items] == names
    assert all(o["kind"] == "Bundle" for o in listed.items)
    assert lists(server) == max(1, math.ceil(objects / page_size))
    assert listed.resource_version == server.store.list(BUNDLE, "ws").resource_version


def test_the_default_page_is_client_gos_500() -> None:
    assert KubeOptions().page_size == 500


def test_an_expired_continue_token_restarts_as_one_full_list(tmp_path: Path) -> None:
    with ApiServer(continue_ttl=0.0) as server:
        server.store.create(NAMESPACE, {"metadata": {"name": "ws"}})
        names = fill(server, 5)
        kubeconfig = server.kubeconfig(tmp_path / "kubeconfig")
        with KubeStore.from_kubeconfig(kubeconfig, None, paged(2)) as store:
            server.reset_counts()
            listed = store.list(BUNDLE, "ws")
        # The first page, the continue answered 410, then everything in one response.
        assert lists(server) == 3
        assert [o["metadata"]["name"] for o in listed.items] == names


def _wait_for(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + PATIENCE
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_informers_list_and_relist_after_410_in_pages(
    server: ApiServer, connect: Callable[..., KubeStore]
) -> None:
    names = fill(server, 5)
    store = connect(paged(2))
    timers = Timers(SystemClock())
    timers.start()
    informer = Informer(store, BUNDLE, timers, namespace="ws")
    server.reset_counts()
    # The first watch is answered 410 Gone: the informer relists, in pages again.
    server.inject_failure(410, verb=Verb.WATCH, resource=BUNDLE)
    try:
        informer.start()
        assert _wait_for(lambda: server.request_counts()[Verb.WATCH.value] >= 2)
        assert sorted(k.name for k in informer.list_keys()) == names
        assert lists(server) == 2 * math.ceil(5 / 2)
    finally:
        informer.stop()
        timers.stop()
