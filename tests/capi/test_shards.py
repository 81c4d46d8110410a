"""The importer of a shard's manager imports the Cluster API clusters of its own workspaces only:
it works through the shard's ShardedStore, as the manager's controllers do."""

from __future__ import annotations

import time

from bundler.api.resources import CAPI_CLUSTER, CLUSTER, NAMESPACE, SECRET
from bundler.capi.start import CapiImportOptions, start_capi_importer
from bundler.core.capi_import import ImportMode
from bundler.core.shards import Shard
from bundler.runtime.clock import ManualClock
from bundler.runtime.host import Host
from bundler.store.memory import MemoryStore
from bundler.store.sharded import ShardedStore
from tests.support.capi.capi_objects import capi_cluster, kubeconfig_secret
from tests.support.capi.fleet import PATIENCE

# Shard 0 of 3 owns team-a; team-b is shard 2's (tests/core/test_shards.py pins the hash).
MINE, THEIRS = "team-a", "team-b"


def test_a_shard_imports_only_its_workspaces_clusters() -> None:
    store = MemoryStore()
    for workspace in (MINE, THEIRS):
        store.create(NAMESPACE, {"metadata": {"name": workspace}})
        store.create(CAPI_CLUSTER, capi_cluster("capi", namespace=workspace))
        store.create(SECRET, kubeconfig_secret("capi", workspace))
    clock = ManualClock()
    host = Host(ShardedStore(store, Shard(0, 3)), clock=clock, name="shard-0")
    assert start_capi_importer(host, CapiImportOptions(mode=ImportMode.ALL)) is not None
    host.start()
    try:
        deadline = time.monotonic() + PATIENCE
        while not store.list(CLUSTER, MINE).items and time.monotonic() < deadline:
            clock.advance(0.05)
            time.sleep(0.01)
        assert host.wait_idle(PATIENCE)
        assert [c["metadata"]["name"] for c in store.list(CLUSTER, MINE).items] == ["capi"]
        assert store.list(CLUSTER, THEIRS).items == []
    finally:
        host.stop(PATIENCE)
