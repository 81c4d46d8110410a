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

import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from bundler.api.bundle import Bundle
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.dependencies import DependsOn
from bundler.core.dependencies import has_selectors
from bundler.core.images.wanted import (
    ImageAnswer,
    ImageQuery,
    ResolvedImages,
    answers_for,
    image_queries,
)
from bundler.core.management_values import ManagementReference, management_references
from bundler.core.planning import (
    Delivered,
    Dependencies,
    OptionsOrError,
    PlannedDeployment,
    ResolvedVersions,
    key,
    merged_helm_view,
    plan_deployment,
    render_many,
)
from bundler.core.planning.held import DEFAULT_BUNDLE_HELD_BYTES, HeldBytes
from bundler.core.targeting import TargetDecision, match_targets
from bundler.core.templating.images import ImageNotResolvedError
from bundler.core.templating.templater import IN_PROCESS, Templater
from bundler.errors import TemplateError
from bundler.manager.observed.indexes import LabelsFingerprint, Memberships, labels_fingerprint
from bundler.resolution.version_resolution import VersionQuery, query_for

_Fingerprint = tuple[str | None, int | None, LabelsFingerprint, LabelsFingerprint, Memberships]


@dataclass(frozen=True)
class Row:
    """One targeted cluster: its planned BundleDeployment, or why it could not be rendered
    (`held_by`: the unresolved image its values read, when that is why)."""

    cluster: Cluster
    planned: PlannedDeployment | None
    error: str | None = None
    held_by: str | None = None

    @functools.cached_property
    def key(self) -> str:
        # Read for every row on every pass (rollout targets, outcomes, sync checks): made once.
        return key(self.cluster.metadata.namespace, self.cluster.metadata.name)


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
    def queries(self) -> list[VersionQuery]:
        return [e.query for e in self.entries.values() if e.query is not None]

    @property
    def image_queries(self) -> list[ImageQuery]:
        """The images the targeted clusters want, each (name, selection) once, in order."""
        found = {q.key: q for e in self.entries.values() for q in e.images}
        return list(found.values())

    @property
    def targeted(self) -> frozenset[str]:
        return frozenset(k for k, e in self.entries.items() if e.decision.deploy)

    def management_references(self, bundle: Bundle) -> list[ManagementReference]:
        """The valuesFrom entries with source: Management the targeted clusters' options hold:
        spec.helm's, and those of the targets that decide for some cluster."""
        references = management_references(bundle)
        deciding = [e.decision for e in self.entries.values() if e.decision.deploy]
        if not references or not deciding:
            return []
        used = {result.index for decision in deciding for result in decision.contributing}
        return [r for r in references if r.target is None or r.target in used]


# The version, image answers, resolved dependencies and management values digests a row is
# rendered with.
RowInputs = tuple[
    str | None,
    Mapping[str, ImageAnswer],
    tuple[DependsOn, ...] | None,
    tuple[tuple[tuple[str, str], str], ...],
]


@dataclass(frozen=True)
class _Entry:
    cluster: Cluster
    fingerprint: _Fingerprint
    decision: TargetDecision
    query: VersionQuery | None
    images: tuple[ImageQuery, ...] = ()
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

    def render(
        self,
        bundle: Bundle,
        decided: Decided,
        resolved: ResolvedVersions,
        images: ResolvedImages | None = None,
        dependencies: Dependencies | None = None,
        delivered: Delivered | None = None,
    ) -> BundleRows:
        """A row per targeted cluster, rendered unless its inputs are unchanged since last time.
        `dependencies`: the Bundle's dependsOn resolved against its workspace (None: by name);
        `delivered`: the digests of its management values objects.

        Errors other than a TemplateError (confined to its row) mean the bundle is invalid: they
        propagate.
        """
        images = images or {}
        entries = self._render(
            bundle, dict(decided.entries), resolved, images, dependencies, delivered or {}
        )
        with self._lock:
            self._bundles[_bundle_key(bundle)] = (decided.ident, entries)
        rows = tuple(e.row for e in entries.values() if e.row is not None)
        return BundleRows(rows, resolved, images, tuple(decided.image_queries))

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
        if entry.query is not None or entry.images:
            return False, None
        if entry.decision.deploy:
            elsewhere = sum(e.held_bytes for k, e in entries.items() if k != cluster_key)
            rendered = self._render(bundle, {cluster_key: entry}, {}, {}, None, {}, elsewhere)
            entry = rendered[cluster_key]
        with self._lock:
            if self._bundles.get(_bundle_key(bundle), (None, {}))[1] is entries:
                entries[cluster_key] = entry
        return True, entry.row if entry.decision.deploy else None

    def forget(self, bundle: str) -> None:
        with self._lock:
            self._bundles.pop(bundle, None)

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
            and previous.cluster is cluster
            and previous.fingerprint[-1] == memberships
        ):
            # The very model the cache held last pass (models are never changed in place): the
            # same labels and annotations, without computing their fingerprints again.
            return previous
        meta = cluster.metadata
        fingerprint: _Fingerprint = (
            meta.uid,
            meta.generation,
            labels_fingerprint(meta.labels),
            labels_fingerprint(meta.annotations),
            memberships,
        )
        if previous is not None and previous.fingerprint == fingerprint:
            # Same inputs; the newer model only differs in what rendering does not read.
            row = previous.row and replace(previous.row, cluster=cluster)
            return replace(previous, cluster=cluster, row=row)
        with self._lock:
            self.decided += 1
        decision = match_targets(bundle, cluster, groups)
        if not decision.deploy:
            return _Entry(cluster, fingerprint, decision, None)
        query = query_for(merged_helm_view(bundle, decision))
        return _Entry(cluster, fingerprint, decision, query, image_queries(bundle, decision))

    def _render(
        self,
        bundle: Bundle,
        entries: dict[str, _Entry],
        resolved: ResolvedVersions,
        images: ResolvedImages,
        dependencies: Dependencies | None,
        delivered: Delivered,
        held_elsewhere: int = 0,
    ) -> dict[str, _Entry]:
        """`entries` with a row for each targeted cluster, rendered in one batch unless its
        inputs are unchanged since last time; `held_elsewhere`: what the Bundle's clusters not
        in `entries` hold (bundler.core.planning.held)."""
        deps = None if dependencies is None else tuple(dependencies)
        digests = tuple(sorted(delivered.items()))
        stale: list[tuple[str, RowInputs]] = []
        for cluster_key, entry in entries.items():
            if not entry.decision.deploy:
                continue
            version = resolved.get(entry.query.key) if entry.query is not None else None
            inputs: RowInputs = (version, answers_for(entry.images, images), deps, digests)
            if entry.row is None or entry.rendered_with != inputs:
                stale.append((cluster_key, inputs))
        if not stale:
            return entries
        with self._lock:
            self.rendered += len(stale)
        targeted = [(entries[k].cluster, entries[k].decision) for k, _ in stale]
        again = {k for k, _ in stale}
        kept = sum(e.held_bytes for k, e in entries.items() if k not in again)
        held = HeldBytes(self.bundle_limit_bytes, held_elsewhere + kept)
        answers = render_many(
            bundle, targeted, resolved, images, deps, self.templater, held, delivered
        )
        for index, ((cluster_key, inputs), answer) in enumerate(zip(stale, answers, strict=True)):
            entry = entries[cluster_key]
            row = _row(bundle, entry.cluster, answer)
            entries[cluster_key] = replace(
                entry, row=row, rendered_with=inputs, held_bytes=held.charged.get(index, 0)
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
