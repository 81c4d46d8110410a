"""What the manager tests share: a world of bundler objects created in a store, an agent's status
writes, a Store that counts writes, and waiting until a manager has caught up with a store (in
memory or over HTTP)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from bundler.api.bundle import Bundle
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.resources import (
    BUNDLE,
    BUNDLE_DEPLOYMENT,
    CLUSTER,
    CLUSTER_GROUP,
    NAMESPACE,
    SECRET,
    Resource,
)
from bundler.core.naming import cluster_namespace
from bundler.inputs import World
from bundler.manager.app import Manager
from bundler.runtime.clock import ManualClock
from bundler.store.protocol import Obj, Store
from tests.support.builders import WS
from tests.support.stores import StoreProxy, Verb

# Upper bound (real seconds) on waits for other threads; tests never assert on durations.
WAIT = 15.0


# The examples that hold bundler objects only (others hold Cluster API objects for the importer).
EXAMPLES = [
    str(Path(__file__).resolve().parents[3] / "examples" / name)
    for name in ("podinfo", "oci", "calico")
]


StartManager = Callable[..., Manager]
WRITE_VERBS = frozenset(
    {Verb.CREATE, Verb.UPDATE, Verb.UPDATE_STATUS, Verb.PATCH, Verb.PATCH_STATUS, Verb.DELETE}
)


class CountingStore(StoreProxy):
    """A Store that counts the writes going through it, by (verb, kind plural)."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.writes: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()

    def before(self, verb: Verb, res: Resource) -> None:
        if verb in WRITE_VERBS:
            with self._lock:
                self.writes[(verb.value, res.plural)] += 1

    def total(self, skip: tuple[str, ...] = ("leases",)) -> int:
        with self._lock:
            return sum(n for (_, plural), n in self.writes.items() if plural not in skip)

    def reset(self) -> None:
        with self._lock:
            self.writes.clear()


def settle(manager: Manager) -> None:
    """Wait until the manager has nothing left to do (in-memory stores deliver events at once)."""
    assert manager.wait_idle(WAIT), "the manager did not settle"


def caught_up(manager: Manager, store: Store) -> bool:
    """Every informer of the manager holds exactly what the store holds."""
    for informer in manager.informers():
        listed = store.list(informer.res, namespace=informer.namespace, labels=informer.labels)
        want = {_ident(o) for o in listed.items}
        if {_ident(o) for o in informer.list()} != want:
            return False
    return True


def settle_remote(manager: Manager, store: Store) -> None:
    """Wait until the manager is idle and its caches match the store: nothing is in flight."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if manager.wait_idle(WAIT) and caught_up(manager, store) and manager.host.is_idle():
            return
        time.sleep(0.02)
    raise AssertionError("the manager did not catch up with the server")


def _ident(obj: Obj) -> tuple[str, str, str]:
    meta = obj["metadata"]
    return (meta.get("namespace") or "", meta["name"], meta["resourceVersion"])


def world(*objects: Bundle | Cluster | ClusterGroup) -> World:
    found = World()
    for obj in objects:
        if isinstance(obj, Bundle):
            found.bundles.append(obj)
        elif isinstance(obj, Cluster):
            found.clusters.append(obj)
        else:
            found.groups.append(obj)
    return found


def create_world(store: Store, world: World) -> None:
    """Create the world's workspaces (if missing) and objects, as `kubectl apply` would."""
    metas = [
        *(c.metadata for c in world.clusters),
        *(g.metadata for g in world.groups),
        *(b.metadata for b in world.bundles),
    ]
    namespaces = {m.namespace or "" for m in metas} | {
        s["metadata"]["namespace"] for s in world.secrets
    }
    existing = {n["metadata"]["name"] for n in store.list(NAMESPACE).items}
    for workspace in sorted(namespaces - existing):
        store.create(NAMESPACE, {"metadata": {"name": workspace}})
    for secret in world.secrets:
        store.create(SECRET, secret)
    for res, models in ((CLUSTER, world.clusters), (CLUSTER_GROUP, world.groups)):
        for model in models:
            store.create(res, model.to_wire())
    for bundle in world.bundles:
        store.create(BUNDLE, bundle.to_wire())


def deployments(store: Store) -> dict[tuple[str, str], Obj]:
    """Every BundleDeployment by (cluster name, bundle name) from its labels."""
    found = {}
    for bd in store.list(BUNDLE_DEPLOYMENT).items:
        labels = bd["metadata"]["labels"]
        found[(labels["bundler.dev/cluster-name"], labels["bundler.dev/bundle-name"])] = bd
    return found


def essentials(obj: Obj) -> tuple[str, str, dict[str, str], Obj]:
    """What `bundler render` and the manager must agree on: name, namespace, labels and spec."""
    meta = obj["metadata"]
    return (meta["namespace"], meta["name"], meta.get("labels") or {}, obj["spec"])


def deployment_of(store: Store, cluster: str, bundle: str = "app", ws: str = WS) -> Obj:
    return store.get(BUNDLE_DEPLOYMENT, bundle, cluster_namespace(ws, cluster))


def report(
    store: Store,
    cluster: str,
    bundle: str = "app",
    *,
    applied: bool = True,
    ready: bool = True,
    modified: bool = False,
    deployed_error: str | None = None,
    ready_reason: str = "",
) -> None:
    """Write a BundleDeployment's status as the agent would."""
    bd = deployment_of(store, cluster, bundle)
    conditions = []
    if deployed_error is not None:
        conditions.append(
            {
                "type": "Deployed",
                "status": "False",
                "reason": "ApplyFailed",
                "message": deployed_error,
                "observedGeneration": bd["metadata"]["generation"],
            }
        )
    if ready_reason:
        conditions.append({"type": "Ready", "status": "False", "reason": ready_reason})
    status: Obj = {
        "appliedDeploymentID": bd["spec"]["deploymentID"] if applied else "s-old",
        "ready": ready,
        "nonModified": not modified,
        "conditions": conditions,
    }
    store.patch_status(
        BUNDLE_DEPLOYMENT, bd["metadata"]["name"], {"status": status}, bd["metadata"]["namespace"]
    )


def status_of(store: Store, res: Resource, name: str, ws: str = WS) -> Obj:
    status: Obj = store.get(res, name, ws).get("status") or {}
    return status


def ready_condition(store: Store, name: str = "app") -> Obj:
    """The Bundle's Ready condition."""
    conditions = status_of(store, BUNDLE, name)["conditions"]
    found: Obj = next(c for c in conditions if c["type"] == "Ready")
    return found


def check_in(store: Store, clock: ManualClock, cluster: str) -> None:
    """The cluster's agent reports it is alive now."""
    seen = clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    store.patch_status(CLUSTER, cluster, {"status": {"agent": {"lastSeen": seen}}}, WS)
