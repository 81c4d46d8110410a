"""The manager's metrics: fleet state from the caches (only on the leader), offline clusters,
version and image resolutions by registry and result, and rollout actions."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from bundler.api.images import BundleImage, ResolvedImage
from bundler.api.resources import BUNDLE, CLUSTER
from bundler.core.rollout import RolloutDecision
from bundler.errors import InvalidInputError, TransientError
from bundler.manager.app import Manager
from bundler.manager.metrics import ManagerMetrics
from bundler.manager.options import ManagerOptions
from bundler.runtime.clock import ManualClock
from bundler.runtime.key import Key
from bundler.store.memory import MemoryStore
from tests.support.builders import WS, bundle, cluster
from tests.support.manager.world import WAIT, settle

ALL: list[dict[str, Any]] = [{"clusterSelector": {}}]
MakeManager = Callable[..., tuple[Manager, CollectorRegistry]]


@pytest.fixture
def make_manager(store: MemoryStore, clock: ManualClock) -> Iterator[MakeManager]:
    """Started managers, each exporting to a registry of its own; all stopped after the test."""
    started: list[Manager] = []

    def make(**options: Any) -> tuple[Manager, CollectorRegistry]:
        registry = CollectorRegistry()
        manager = Manager(store, ManagerOptions(workers=2, **options), clock, registry=registry)
        manager.start()
        started.append(manager)
        settle(manager)
        return manager, registry

    yield make
    for manager in started:
        manager.stop(WAIT)


def desired(registry: CollectorRegistry) -> float | None:
    labels = {"namespace": WS, "bundle": "app"}
    return registry.get_sample_value("bundler_bundle_clusters_desired", labels)


def test_only_the_leader_exports_the_fleet_state(
    store: MemoryStore, make_manager: MakeManager
) -> None:
    store.create(CLUSTER, cluster("a").to_wire())
    store.create(BUNDLE, bundle(ALL).to_wire())
    (leader, leading), (standby, standing_by) = (
        make_manager(leader_elect=True, identity=name) for name in ("one", "two")
    )
    settle(leader)
    assert (leader.is_leading, standby.is_leading) == (True, False)
    assert desired(leading) == 1
    assert desired(standing_by) is None


def test_clusters_whose_agent_went_quiet_count_as_offline(
    store: MemoryStore, clock: ManualClock, make_manager: MakeManager
) -> None:
    store.create(CLUSTER, cluster("a").to_wire())
    store.create(CLUSTER, cluster("b").to_wire())
    manager, registry = make_manager(offline_after=60.0)
    assert registry.get_sample_value("bundler_clusters_offline", {"namespace": WS}) == 0
    clock.advance(120.0)
    settle(manager)
    assert registry.get_sample_value("bundler_clusters_offline", {"namespace": WS}) == 2
    ready = registry.get_sample_value("bundler_cluster_ready", {"namespace": WS, "cluster": "a"})
    assert ready == 0


def _answer(outcome: str | Exception) -> Callable[..., str]:
    def resolve(*_: object) -> str:
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    return resolve


@pytest.mark.parametrize(
    ("outcome", "result", "reason"),
    [
        ("1.2.3", "resolved", None),
        (TransientError("connection refused"), "failed", "unavailable"),
        (InvalidInputError("no version matches"), "failed", "rejected"),
    ],
    ids=["resolved", "unreachable", "no-match"],
)
def test_resolutions_are_counted_by_registry_and_result(
    outcome: str | Exception, result: str, reason: str | None
) -> None:
    registry = CollectorRegistry()
    resolve = ManagerMetrics(registry).counting(_answer(outcome))
    assert resolve is not None
    ask = ("oci://registry.example:5000/charts", "app", "^1", None)
    if isinstance(outcome, Exception):
        with pytest.raises(type(outcome)):
            resolve(*ask)
    else:
        assert resolve(*ask) == outcome
    host = {"registry": "registry.example"}
    assert (
        registry.get_sample_value("bundler_version_resolutions_total", {**host, "result": result})
        == 1
    )
    errors = registry.get_sample_value(
        "bundler_registry_errors_total", {**host, "reason": reason or "unavailable"}
    )
    assert errors == (None if reason is None else 1)


@pytest.mark.parametrize(
    ("error", "result"),
    [
        (None, "resolved"),
        (TransientError("connection refused"), "unavailable"),
        (InvalidInputError("no tag matches"), "rejected"),
    ],
    ids=["resolved", "unreachable", "no-match"],
)
def test_image_resolutions_are_counted_by_registry_and_result(
    error: Exception | None, result: str
) -> None:
    image = BundleImage.model_validate(
        {"name": "web", "repository": "registry.example:5000/web", "policy": {"numerical": {}}}
    )

    def answer(asked: BundleImage, secret: Mapping[str, str] | None) -> ResolvedImage:
        if error is not None:
            raise error
        return ResolvedImage(name="web", repository=asked.repository, tag="7", digest="sha256:7")

    registry = CollectorRegistry()
    resolve = ManagerMetrics(registry).counting_images(answer)
    assert resolve is not None
    if error is not None:
        with pytest.raises(type(error)):
            resolve(image, None)
    else:
        assert resolve(image, None).tag == "7"
    labels = {"registry": "registry.example", "result": result}
    assert registry.get_sample_value("bundler_image_resolutions_total", labels) == 1


@pytest.mark.parametrize(
    ("decision", "action"),
    [
        (RolloutDecision("c", promote=True, create=True), "created"),
        (RolloutDecision("c", promote=True), "promoted"),
        (RolloutDecision("c", stage=True), "staged"),
        (RolloutDecision("c"), None),
    ],
    ids=["created", "promoted", "staged", "left-alone"],
)
def test_rollout_actions(decision: RolloutDecision, action: str | None) -> None:
    registry = CollectorRegistry()
    ManagerMetrics(registry).rolled_out(Key(WS, "app"), decision)
    written = {
        found: registry.get_sample_value(
            "bundler_rollout_deployments_total", {"namespace": WS, "bundle": "app", "action": found}
        )
        for found in ("created", "promoted", "staged")
    }
    assert written == {found: 1.0 if found == action else None for found in written}


def test_registry_hosts_beyond_the_limit_are_counted_as_other() -> None:
    registry = CollectorRegistry()
    resolve = ManagerMetrics(registry, registry_labels=3).counting(_answer("1.0.0"))
    assert resolve is not None
    hosts = [f"h{n}.example" for n in range(10)]
    for host in [*hosts, "H0.EXAMPLE"]:
        resolve(f"oci://{host}/charts", "app", "^1", None)
    counted = {
        sample.labels["registry"]: sample.value
        for metric in registry.collect()
        if metric.name == "bundler_version_resolutions"
        for sample in metric.samples
        if sample.name.endswith("_total")
    }
    assert counted == {"h0.example": 2, "h1.example": 1, "h2.example": 1, "other": 7}


# (id, repository a Bundle names, the registry label it is counted under)
REGISTRY_LABELS = [
    ("host", "https://charts.example/stable", "charts.example"),
    ("credentials-in-the-url", "https://user:s3cret@charts.example/x", "charts.example"),
    ("port", "oci://charts.example:5000/x", "charts.example"),
    ("no-host", "oci:///charts", "other"),
    ("unclosed-ipv6", "oci://[::1/charts", "other"),
]


@pytest.mark.parametrize(
    ("repo", "label"), [c[1:] for c in REGISTRY_LABELS], ids=[c[0] for c in REGISTRY_LABELS]
)
def test_the_registry_label_is_a_host_and_nothing_else(repo: str, label: str) -> None:
    registry = CollectorRegistry()
    resolve = ManagerMetrics(registry).counting(_answer("1.0.0"))
    assert resolve is not None
    resolve(repo, "app", "^1", None)
    labels = {"registry": label, "result": "resolved"}
    assert registry.get_sample_value("bundler_version_resolutions_total", labels) == 1
