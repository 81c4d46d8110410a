"""Planning a Bundle over its workspace, one memoized row per (bundle, cluster).

A row is what one cluster gets from one Bundle: whether it is targeted and, if so, its rendered
BundleDeployment or its template error. Rendering is the expensive part, so each row is kept with
what it was computed from: the Bundle's uid and generation, the Cluster's uid, generation, labels
and annotations, the groups that pick the Cluster, and the concrete version and image answers it
was rendered with.
When one cluster's labels change, every Bundle of the workspace is looked at again, but only that
cluster's rows are recomputed; `rendered` counts the renders and `decided` the targeting decisions
so this stays observable. The rows a pass must render are rendered as one batch by the memo's
templater (the manager's: a pool of bounded worker processes, bundler.templating_pool).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from bundler.api.bundle import Bundle
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.dependencies import DependsOn
from bundler.core.dependencies import has_selectors
from bundler.core.images.wanted import ImageAnswer, ImageQuery, ResolvedImages, answers_for
from bundler.core.management_values import ManagementReference, management_references
from bundler.core.planning import (
    OptionsOrError,
    PlannedDeployment,
    key,
    plan_deployment,
    render_many,
)
from bundler.core.planning.decide import (
    ClusterDecision,
    decide_cluster,
    deciding_references,
    version_queries,
    wanted_images,
)
from bundler.core.planning.held import DEFAULT_BUNDLE_HELD_BYTES, HeldBytes
from bundler.core.planning.inputs import PassInputs, ResolvedVersions
from bundler.core.planning.version_query import VersionQuery
from bundler.core.templating.images import ImageNotResolvedError
from bundler.core.templating.templater import IN_PROCESS, Templater
from bundler.errors import TemplateError
from bundler.manager.observed.indexes import ClusterIdentity, Memberships, cluster_identity


@dataclass(frozen=True, slots=True)
class Row:
    """One targeted cluster: its planned BundleDeployment, or why it could not be rendered
    (`held_by`: the unresolved image its values read, when that is why)."""

    cluster: Cluster
    planned: PlannedDeployment | None
    error: str | None = None
    held_by: str | None = None
    #: The cluster's key, read for every row on every pass (rollout targets, outcomes, syncs).
    key: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        meta = self.cluster.metadata
        object.__setattr__(self, "key", key(meta.namespace, meta.name))


@dataclass(frozen=True)
class BundleRows:
    rows: tuple[Row, ...]
    resolved: ResolvedVersions
    images: ResolvedImages = field(default_factory=dict)
    image_queries: tuple[ImageQuery, ...] = ()


@dataclass(frozen=True)
class Decided:
    """The targeted clusters of one pass, before rendering."""

    ident: tuple[str, int]
    entries: Mapping[str, _Entry]

    @property
    def decisions(self) -> list[ClusterDecision]:
        return [e.decided for e in self.entries.values()]

    @property
    def queries(self) -> list[VersionQuery]:
        return version_queries(self.decisions)

    @property
    def image_queries(self) -> list[ImageQuery]:
        return wanted_images(self.decisions)

    @property
    def targeted(self) -> frozenset[str]:
        return frozenset(k for k, e in self.entries.items() if e.decided.decision.deploy)

    def management_references(self, bundle: Bundle) -> list[ManagementReference]:
        return deciding_references(bundle, self.decisions)


# The version, image answers, resolved dependencies and management values digests a row is
# rendered with.
RowInputs = tuple[
    str | None,
    Mapping[str, ImageAnswer],
    tuple[DependsOn, ...] | None,
    tuple[tuple[tuple[str, str], str], ...],
]


@dataclass(frozen=True, slots=True)
class _Entry:
    #: What the decision was made from: the cluster and the groups that pick it.
    identity: ClusterIdentity
    memberships: Memberships
    decided: ClusterDecision
    row: Row | None = None
    rendered_with: RowInputs | None = None
    #: What this cluster's render holds that no other cluster's shares (bundler.core.planning.held).
    held_bytes: int = 0


class RowMemo:
    """Rows of every Bundle, kept for the Bundle's current generation only."""

    def __init__(
        self, templater: Templater = IN_PROCESS, bundle_limit_bytes: int = DEFAULT_BUNDLE_HELD_BYTES
    ) -> None:
        """`bundle_limit_bytes`: what one Bundle's rendered options may hold across its
        clusters (bundler.core.planning.held)."""
        self.templater = templater
        self.bundle_limit_bytes = bundle_limit_bytes
        self._lock = threading.Lock()
        self._bundles: dict[str, tuple[tuple[str, int], dict[str, _Entry]]] = {}
        # What each Bundle's rows hold in all (their held_bytes summed), so one cluster's row
        # again does not add up the whole fleet's.
        self._held: dict[str, int] = {}
        self.rendered = 0
        self.decided = 0

    def decide(
        self,
        bundle: Bundle,
        clusters: Sequence[Cluster],
        groups: Sequence[ClusterGroup],
        memberships: Callable[[Cluster], Memberships],
    ) -> Decided:
        """Which clusters `bundle` targets, and the version ranges their rows need resolved."""
        ident = (bundle.metadata.uid or "", bundle.metadata.generation or 0)
        with self._lock:
            known_ident, known = self._bundles.get(_bundle_key(bundle), (ident, {}))
        previous = known if known_ident == ident else {}
        entries = {}
        for cluster in sorted(clusters, key=lambda c: c.metadata.name):
            cluster_key = key(cluster.metadata.namespace, cluster.metadata.name)
            entries[cluster_key] = self._decide(
                bundle, cluster, groups, memberships(cluster), previous.get(cluster_key)
            )
        return Decided(ident, entries)

    def render(self, bundle: Bundle, decided: Decided, inputs: PassInputs) -> BundleRows:
        """A row per targeted cluster, rendered unless its inputs are unchanged since last time;
        `inputs`: what the pass resolved (bundler.core.planning.bundle_pass).

        Errors other than a TemplateError (confined to its row) mean the bundle is invalid: they
        propagate.
        """
        entries = self._render(bundle, dict(decided.entries), inputs)
        with self._lock:
            self._bundles[_bundle_key(bundle)] = (decided.ident, entries)
            self._held[_bundle_key(bundle)] = sum(e.held_bytes for e in entries.values())
        rows = tuple(e.row for e in entries.values() if e.row is not None)
        images = inputs.images or {}
        return BundleRows(rows, inputs.resolved, images, tuple(decided.image_queries))

    def one(
        self,
        bundle: Bundle,
        cluster: Cluster,
        groups: Sequence[ClusterGroup],
        memberships: Memberships,
    ) -> tuple[bool, Row | None]:
        """One cluster's row of `bundle` again (None: not targeted), memoized like a full pass.

        (False, None) when only a full pass can say: the memo holds another generation of the
        Bundle, or the row needs a version range or an image resolved."""
        ident = (bundle.metadata.uid or "", bundle.metadata.generation or 0)
        cluster_key = key(cluster.metadata.namespace, cluster.metadata.name)
        with self._lock:
            known_ident, entries = self._bundles.get(_bundle_key(bundle), (None, {}))
        if known_ident != ident or has_selectors(bundle) or management_references(bundle):
            # (a dependsOn selector is resolved against the whole workspace, and management
            # values are read there, in a full pass)
            return False, None
        entry = self._decide(bundle, cluster, groups, memberships, entries.get(cluster_key))
        if entry.decided.query is not None or entry.decided.images:
            return False, None
        deploy = entry.decided.decision.deploy
        before = entries[cluster_key].held_bytes if cluster_key in entries else 0
        if deploy:
            with self._lock:
                elsewhere = self._held.get(_bundle_key(bundle), 0) - before
            rendered = self._render(bundle, {cluster_key: entry}, PassInputs(), elsewhere)
            entry = rendered[cluster_key]
        with self._lock:
            if self._bundles.get(_bundle_key(bundle), (None, {}))[1] is entries:
                entries[cluster_key] = entry
                held = self._held.get(_bundle_key(bundle), 0)
                self._held[_bundle_key(bundle)] = held - before + entry.held_bytes
        return True, entry.row if deploy else None

    def forget(self, bundle: str) -> None:
        with self._lock:
            self._bundles.pop(bundle, None)
            self._held.pop(bundle, None)

    def template_errors(self) -> dict[str, int]:
        """How many targeted clusters' values fail to render, for each Bundle with any."""
        with self._lock:
            bundles = list(self._bundles.items())
        found = {}
        for bundle, (_, entries) in bundles:
            failing = sum(1 for e in entries.values() if e.row is not None and e.row.error)
            if failing:
                found[bundle] = failing
        return found

    def _decide(
        self,
        bundle: Bundle,
        cluster: Cluster,
        groups: Sequence[ClusterGroup],
        memberships: Memberships,
        previous: _Entry | None,
    ) -> _Entry:
        if (
            previous is not None
            and previous.decided.cluster is cluster
            and previous.memberships == memberships
        ):
            # The very model the cache held last pass (models are never changed in place): the
            # same labels and annotations, without computing their fingerprints again.
            return previous
        identity = cluster_identity(cluster.metadata)
        if (
            previous is not None
            and previous.identity == identity
            and previous.memberships == memberships
        ):
            # Same inputs; the newer model only differs in what rendering does not read.
            row = previous.row and replace(previous.row, cluster=cluster)
            return replace(previous, decided=replace(previous.decided, cluster=cluster), row=row)
        with self._lock:
            self.decided += 1
        return _Entry(identity, memberships, decide_cluster(bundle, cluster, groups))

    def _render(
        self,
        bundle: Bundle,
        entries: dict[str, _Entry],
        inputs: PassInputs,
        held_elsewhere: int = 0,
    ) -> dict[str, _Entry]:
        """`entries` with a row for each targeted cluster, rendered in one batch unless its
        inputs are unchanged since last time; `held_elsewhere`: what the Bundle's clusters not
        in `entries` hold (bundler.core.planning.held)."""
        deps = None if inputs.dependencies is None else tuple(inputs.dependencies)
        digests = tuple(sorted(inputs.delivered.items()))
        images = inputs.images or {}
        stale: list[tuple[str, RowInputs]] = []
        for cluster_key, entry in entries.items():
            decided = entry.decided
            if not decided.decision.deploy:
                continue
            query = decided.query
            version = inputs.resolved.get(query.key) if query is not None else None
            row_inputs: RowInputs = (version, answers_for(decided.images, images), deps, digests)
            if entry.row is None or entry.rendered_with != row_inputs:
                stale.append((cluster_key, row_inputs))
        if not stale:
            return entries
        with self._lock:
            self.rendered += len(stale)
        targeted = [(entries[k].decided.cluster, entries[k].decided.decision) for k, _ in stale]
        again = {k for k, _ in stale}
        kept = sum(e.held_bytes for k, e in entries.items() if k not in again)
        held = HeldBytes(self.bundle_limit_bytes, held_elsewhere + kept)
        answers = render_many(
            bundle,
            targeted,
            inputs.resolved,
            images,
            deps,
            self.templater,
            held,
            inputs.delivered,
        )
        for index, ((cluster_key, row_inputs), answer) in enumerate(
            zip(stale, answers, strict=True)
        ):
            entry = entries[cluster_key]
            row = _row(bundle, entry.decided.cluster, answer)
            entries[cluster_key] = replace(
                entry, row=row, rendered_with=row_inputs, held_bytes=held.charged.get(index, 0)
            )
        return entries


def _bundle_key(bundle: Bundle) -> str:
    return key(bundle.metadata.namespace, bundle.metadata.name)


def _row(bundle: Bundle, cluster: Cluster, answer: OptionsOrError) -> Row:
    if isinstance(answer, ImageNotResolvedError):
        return Row(cluster, None, str(answer), answer.image)
    if isinstance(answer, TemplateError):
        return Row(cluster, None, str(answer))
    return Row(cluster, plan_deployment(bundle, cluster, answer))
