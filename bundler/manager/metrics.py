"""The manager's metrics: the state of the fleet as its status roll-ups say it, and counters of what
the manager did (version and image resolutions, registry errors, rollout steps).

Labels name bundles, clusters and groups, never BundleDeployments: a fleet of N clusters and M
bundles exports O(N + M) series, not O(N x M). The `registry` label is a host a Bundle author
chose: the first MAX_REGISTRY_LABELS hosts seen keep their name, every later one counts as
`other`, so no tenant can grow the series without limit (RegistryLabels). The fleet state is read
from the informer caches at scrape time, and only while leading: a standby replica would otherwise
export a second, stale copy of the same numbers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from bundler.api.images import BundleImage, ResolvedImage
from bundler.api.summary import DeploymentState
from bundler.core.rollout import RolloutDecision
from bundler.core.state import ConditionType
from bundler.core.summary import SUMMARY_FIELD
from bundler.errors import InvalidInputError, TransientError
from bundler.manager.memo.rows import RowMemo
from bundler.manager.observed.scope import Scopes
from bundler.resolution.resolvers import ImageResolverFn, VersionResolver
from bundler.runtime.key import Key
from bundler.store.protocol import Obj

# Registry hosts that get a series of their own; later ones are counted as OTHER_REGISTRY.
MAX_REGISTRY_LABELS = 20
OTHER_REGISTRY = "other"


class RegistryLabels:
    """The `registry` label of a host: the host itself for the first `limit` hosts seen (in
    lowercase), `other` for any later one and for anything that names no host."""

    def __init__(self, limit: int = MAX_REGISTRY_LABELS) -> None:
        self._limit = limit
        self._known: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, host: str | None) -> str:
        if not host:
            return OTHER_REGISTRY
        host = host.lower()
        with self._lock:
            if host in self._known:
                return host
            if len(self._known) < self._limit:
                self._known.add(host)
                return host
        return OTHER_REGISTRY


def _hostname(url: str) -> str | None:
    """The host of `url`, without user information or port; None when it names none."""
    try:
        return urlsplit(url).hostname
    except ValueError:  # an unclosed IPv6 bracket
        return None


class ManagerMetrics:
    """Counters the controllers bump. Without a registry they count into a private one."""

    def __init__(
        self, registry: CollectorRegistry | None = None, registry_labels: int = MAX_REGISTRY_LABELS
    ) -> None:
        registry = registry or CollectorRegistry()
        self._registry_label = RegistryLabels(registry_labels)
        self.resolutions = Counter(
            "bundler_version_resolutions",
            "Version ranges asked of a chart repository, by registry host and result "
            "(resolved, failed).",
            ["registry", "result"],
            registry=registry,
        )
        self.registry_errors = Counter(
            "bundler_registry_errors",
            "Failed version resolutions by registry host and reason: unavailable (unreachable, "
            "timed out, 5xx; retried) or rejected (credentials, missing chart, no matching "
            "version).",
            ["registry", "reason"],
            registry=registry,
        )
        self.image_resolutions = Counter(
            "bundler_image_resolutions",
            "Image policies asked of a registry, by registry host and result: resolved, "
            "unavailable (unreachable, timed out, 5xx; retried) or rejected (credentials, no "
            "matching tag, platform).",
            ["registry", "result"],
            registry=registry,
        )
        self.rollout = Counter(
            "bundler_rollout_deployments",
            "BundleDeployments written by the rollout, by bundle and action: created, staged "
            "(held back by the rollout strategy), promoted or rolled_back.",
            ["namespace", "bundle", "action"],
            registry=registry,
        )

    def counting(self, resolver: VersionResolver | None) -> VersionResolver | None:
        """`resolver`, counting each answer in the resolution and registry metrics."""
        if resolver is None:
            return None
        inner = resolver

        def resolve(
            repo: str, chart: str, constraint: str, secret: Mapping[str, str] | None
        ) -> str:
            host = self._registry_label(_hostname(repo))
            try:
                version = inner(repo, chart, constraint, secret)
            except TransientError:
                self._failed(host, "unavailable")
                raise
            except InvalidInputError:
                self._failed(host, "rejected")
                raise
            self.resolutions.labels(host, "resolved").inc()
            return version

        return resolve

    def counting_images(self, resolver: ImageResolverFn | None) -> ImageResolverFn | None:
        """`resolver`, counting each answer in the image resolution metric."""
        if resolver is None:
            return None
        inner = resolver

        def resolve(image: BundleImage, secret: Mapping[str, str] | None) -> ResolvedImage:
            host = self._registry_label(_hostname(f"//{image.repository}"))
            try:
                resolved = inner(image, secret)
            except TransientError:
                self.image_resolutions.labels(host, "unavailable").inc()
                raise
            except InvalidInputError:
                self.image_resolutions.labels(host, "rejected").inc()
                raise
            self.image_resolutions.labels(host, "resolved").inc()
            return resolved

        return resolve

    def rolled_out(self, bundle: Key, decision: RolloutDecision) -> None:
        """One BundleDeployment of `bundle` written as `decision` said."""
        if decision.create:
            action = "created"
        elif decision.promote:
            action = "promoted"
        elif decision.stage:
            action = "staged"
        elif decision.rollback:
            action = "rolled_back"
        else:
            return
        self.rollout.labels(bundle.namespace, bundle.name, action).inc()

    def _failed(self, host: str, reason: str) -> None:
        self.resolutions.labels(host, "failed").inc()
        self.registry_errors.labels(host, reason).inc()


class FleetState(Collector):
    """Gauges read from the Bundle, Cluster and ClusterGroup status in the caches, at scrape."""

    def __init__(self, scopes: Scopes, memo: RowMemo, is_leading: Callable[[], bool]) -> None:
        self._scopes = scopes
        self._memo = memo
        self._is_leading = is_leading

    def describe(self) -> Iterable[Metric]:
        return list(_Families().all())

    def collect(self) -> Iterable[Metric]:
        families = _Families()
        if self._is_leading():
            for scope in self._scopes.all:
                for bundle in scope.bundles.list():
                    families.bundle(bundle)
                for cluster in scope.clusters.list():
                    families.cluster(cluster)
                for group in scope.groups.list():
                    families.group(group)
            for ref, count in sorted(self._memo.template_errors().items()):
                namespace, _, name = ref.partition("/")
                families.template_errors.add_metric([namespace, name], count)
        return list(families.all())


class _Families:
    def __init__(self) -> None:
        bundle, cluster, group = (
            ["namespace", "bundle"],
            ["namespace", "cluster"],
            ["namespace", "group"],
        )
        self.desired = _gauge("bundle_clusters_desired", "Clusters a bundle targets.", bundle)
        self.ready = _gauge("bundle_clusters_ready", "Clusters where a bundle is Ready.", bundle)
        self.states = _gauge(
            "bundle_deployments",
            "A bundle's BundleDeployments by state (ErrApplied ... Ready).",
            [*bundle, "state"],
        )
        self.bundle_ready = _gauge(
            "bundle_ready", "1 when the Bundle's Ready condition is True.", bundle
        )
        self.template_errors = _gauge(
            "bundle_template_errors", "Clusters whose values for a bundle do not render.", bundle
        )
        self.cluster_desired = _gauge(
            "cluster_bundles_desired", "Bundles that target a cluster.", cluster
        )
        self.cluster_ready = _gauge("cluster_bundles_ready", "Bundles Ready on a cluster.", cluster)
        self.cluster_condition = _gauge(
            "cluster_ready", "1 when the Cluster's Ready condition is True.", cluster
        )
        self.offline = _gauge(
            "clusters_offline", "Clusters whose agent stopped checking in.", ["namespace"]
        )
        self.group_clusters = _gauge("clustergroup_clusters", "Clusters in a group.", group)
        self.group_ready = _gauge(
            "clustergroup_clusters_ready", "Clusters of a group with every bundle Ready.", group
        )
        self._offline: dict[str, int] = {}

    def bundle(self, obj: Obj) -> None:
        labels = _names(obj)
        status = obj.get("status") or {}
        summary = status.get("summary") or {}
        self.desired.add_metric(labels, _count(summary, "desiredReady"))
        self.ready.add_metric(labels, _count(summary, "ready"))
        for state, field in SUMMARY_FIELD.items():
            self.states.add_metric([*labels, state.value], _count(summary, field))
        self.bundle_ready.add_metric(labels, 1.0 if _ready(status) == "True" else 0.0)

    def cluster(self, obj: Obj) -> None:
        labels = _names(obj)
        status = obj.get("status") or {}
        summary = status.get("summary") or {}
        self.cluster_desired.add_metric(labels, _count(summary, "desiredReady"))
        self.cluster_ready.add_metric(labels, _count(summary, "ready"))
        self.cluster_condition.add_metric(labels, 1.0 if _ready(status) == "True" else 0.0)
        offline = _ready_reason(status) == DeploymentState.OFFLINE.value
        self._offline[labels[0]] = self._offline.get(labels[0], 0) + int(offline)

    def group(self, obj: Obj) -> None:
        labels = _names(obj)
        status = obj.get("status") or {}
        total = _count(status, "clusterCount")
        self.group_clusters.add_metric(labels, total)
        self.group_ready.add_metric(
            labels, max(0.0, total - _count(status, "nonReadyClusterCount"))
        )

    def all(self) -> Iterator[GaugeMetricFamily]:
        for namespace, count in sorted(self._offline.items()):
            self.offline.add_metric([namespace], count)
        yield from (v for v in vars(self).values() if isinstance(v, GaugeMetricFamily))


def _gauge(name: str, documentation: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"bundler_{name}", documentation, labels=labels)


def _names(obj: Obj) -> list[str]:
    meta = obj["metadata"]
    return [meta.get("namespace") or "", meta["name"]]


def _count(fields: Mapping[str, Any], name: str) -> float:
    value = fields.get(name)
    return float(value) if isinstance(value, int) else 0.0


def _ready_condition(status: Mapping[str, Any]) -> Mapping[str, Any]:
    for found in status.get("conditions") or []:
        if isinstance(found, Mapping) and found.get("type") == ConditionType.READY.value:
            return found
    return {}


def _ready(status: Mapping[str, Any]) -> str:
    return str(_ready_condition(status).get("status") or "Unknown")


def _ready_reason(status: Mapping[str, Any]) -> str:
    return str(_ready_condition(status).get("reason") or "")
