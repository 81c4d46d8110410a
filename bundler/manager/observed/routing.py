"""Which work each informer event causes: exactly the keys whose outcome the change can affect.

Every route remembers a fingerprint per object of what its controller reads, and fires only when
that fingerprint changes (or the object appears or goes). So the manager's own status writes, and
an agent's heartbeat while it stays online, wake nothing; a Cluster's label change wakes the
Bundles of its workspace (each then re-renders only that cluster's row) and its groups; a
BundleDeployment's status change wakes the status of its Bundle, its Cluster and their groups; a
Bundle that appears or goes wakes the Bundles naming it in dependsOn (their References), and one
that appears, goes or is relabelled those selecting dependencies by label in its workspace; a
workspace Secret's change of type or data wakes the Bundles that name it as credentials, and only
those (every other Secret of the workspace is ignored without a fingerprint kept). A change of the
status fields the manager owns wakes that object's status roll-up, which writes nothing when they
are what it computes: a status written from a stale cache, or by someone else, is corrected.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterable
from typing import Any

from bundler.core.approvals import APPROVE
from bundler.core.deletion_guard import ALLOW_DELETION
from bundler.core.handover import ANNOTATION_PULL_IDENTITY_REMOVED, pull_identity_step
from bundler.core.labels import ANNOTATION_IMPORT_GATE
from bundler.core.naming import cluster_namespace, is_dns1123_label
from bundler.core.rollout_failures import RESUME
from bundler.manager.context import Context, split_ref
from bundler.manager.memo import placements
from bundler.manager.observed.indexes import (
    ObjectUsers,
    cluster_of,
    labels_fingerprint,
    last_seen,
    placement_of,
)
from bundler.manager.observed.scope import Scope
from bundler.manager.owned_status import BUNDLE_FIELDS, CLUSTER_FIELDS, GROUP_FIELDS
from bundler.manager.work import Stage
from bundler.manager.writes import canonical, is_deleting
from bundler.runtime.key import Key
from bundler.store.protocol import EventType, Obj

_GONE = object()
_NOT_READ_OF_IDENTITIES = frozenset({"apiVersion", "kind", "metadata", "data"})


class Changes:
    """Fingerprints last seen per key: `changed` is True when an object appears, goes or differs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[Key, Hashable] = {}

    def forget(self, key: Key) -> None:
        with self._lock:
            self._seen.pop(key, None)

    def changed(self, key: Key, event: EventType, fingerprint: Hashable) -> bool:
        with self._lock:
            before = self._seen.pop(key, _GONE)
            if event is not EventType.DELETED:
                self._seen[key] = fingerprint
        return event is EventType.DELETED or before is _GONE or before != fingerprint


class Dependents:
    """Which Bundles name which in `dependsOn`, and which select Bundles by label there: a Bundle
    appearing or going wakes exactly those naming it and those selecting in its workspace; its
    labels changing, those selecting."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._needs: dict[Key, frozenset[Key]] = {}
        self._needed_by: dict[Key, set[Key]] = {}
        self._selecting: dict[str, set[Key]] = {}

    def record(self, key: Key, event: EventType, obj: Obj) -> None:
        spec = obj.get("spec") or {}
        entries = spec.get("dependsOn") if event is not EventType.DELETED else None
        needs = frozenset(
            Key(key.namespace, str(d["name"]))
            for d in entries or []
            if isinstance(d, dict) and d.get("name")
        )
        selects = any(isinstance(d, dict) and d.get("selector") is not None for d in entries or [])
        with self._lock:
            for old in self._needs.pop(key, frozenset()) - needs:
                self._needed_by.get(old, set()).discard(key)
            for new in needs:
                self._needed_by.setdefault(new, set()).add(key)
            if needs:
                self._needs[key] = needs
            holders = self._selecting.setdefault(key.namespace, set())
            if selects:
                holders.add(key)
            else:
                holders.discard(key)

    def of(self, key: Key) -> list[Key]:
        with self._lock:
            return sorted(self._needed_by.get(key, set()) | self._selectors_of(key))

    def selecting(self, key: Key) -> list[Key]:
        """The other Bundles of `key`'s workspace that select dependencies by label."""
        with self._lock:
            return sorted(self._selectors_of(key))

    def _selectors_of(self, key: Key) -> set[Key]:
        return self._selecting.get(key.namespace, set()) - {key}


def _meta(obj: Obj) -> dict[str, Any]:
    meta: dict[str, Any] = obj.get("metadata", {})
    return meta


def _owned_status(obj: Obj, fields: tuple[str, ...]) -> str:
    """The status fields the manager writes, as they are now (never the agent's)."""
    status = obj.get("status") or {}
    return canonical({name: status.get(name) for name in fields})


def _identity(obj: Obj) -> tuple[Any, ...]:
    meta = _meta(obj)
    return (
        meta.get("uid"),
        meta.get("generation"),
        labels_fingerprint(meta.get("labels") or {}),
        meta.get("deletionTimestamp"),
    )


def _targeting_annotations(meta: Obj) -> dict[str, str]:
    """A Cluster's annotations as templates see them, less the manager's own handover mark (its
    writing must not replan every Bundle of the workspace)."""
    annotations = meta.get("annotations") or {}
    if ANNOTATION_PULL_IDENTITY_REMOVED not in annotations:
        return dict(annotations)
    return {k: v for k, v in annotations.items() if k != ANNOTATION_PULL_IDENTITY_REMOVED}


class Router:
    """The event handlers of one scope's informers."""

    def __init__(self, ctx: Context, scope: Scope) -> None:
        self.ctx = ctx
        self.scope = scope
        self._bundles = Changes()
        self._bundle_finalizers = Changes()
        self._bundle_presence = Changes()
        self._bundle_labels = Changes()
        self._dependents = Dependents()
        self._bundle_status = Changes()
        self._cluster_setup = Changes()
        self._cluster_status = Changes()
        self._cluster_targeting = Changes()
        self._cluster_membership = Changes()
        self._groups = Changes()
        self._group_status = Changes()
        self._deployment_specs = Changes()
        self._namespaces = Changes()
        self._identities = Changes()
        self._secrets = Changes()
        self._config_maps = Changes()

    def attach(self) -> None:
        scope = self.scope
        scope.bundles.add_handler(self.on_bundle)
        scope.clusters.add_handler(self.on_cluster)
        scope.groups.add_handler(self.on_group)
        scope.deployments.add_handler(self.on_deployment)
        scope.namespaces.add_handler(self.on_namespace)
        scope.secrets.add_handler(self.on_secret)
        scope.config_maps.add_handler(self.on_config_map)
        identities = (
            scope.service_accounts,
            scope.agent_tokens,
            scope.roles,
            scope.role_bindings,
            # a kubeconfig copy gone lets a pull identity be made
            scope.kubeconfig_copies,
        )
        for informer in identities:
            informer.add_handler(self.on_identity)

    def on_bundle(self, event: EventType, obj: Obj) -> None:
        key = Key.of(obj)
        annotations = _meta(obj).get("annotations") or {}
        allowances = (
            annotations.get(ALLOW_DELETION),
            annotations.get(RESUME),
            annotations.get(APPROVE),
        )
        if self._bundles.changed(key, event, (*_identity(obj), allowances)):
            self._replan((key,))
        # The pass puts its finalizer back (a continuation too): no need to plan again for it.
        if self._bundle_finalizers.changed(key, event, tuple(_meta(obj).get("finalizers") or ())):
            self.ctx.work.add(Stage.BUNDLE, key)
        self._dependents.record(key, event, obj)
        labels = labels_fingerprint(_meta(obj).get("labels") or {})
        relabelled = self._bundle_labels.changed(key, event, labels)
        if self._bundle_presence.changed(key, event, True):
            self._replan(self._dependents.of(key))
        elif relabelled:
            self._replan(self._dependents.selecting(key))
        if self._bundle_status.changed(key, event, _owned_status(obj, BUNDLE_FIELDS)):
            self.ctx.work.add(Stage.BUNDLE_STATUS, key)

    def on_cluster(self, event: EventType, obj: Obj) -> None:
        key = Key.of(obj)
        meta, work = _meta(obj), self.ctx.work
        identity = _identity(obj)
        setup = (
            identity,
            tuple(meta.get("finalizers") or ()),
            # a handover reported in the status lets the pull agent identity go
            pull_identity_step(obj),
        )
        if self._cluster_setup.changed(key, event, setup):
            self._expect_namespace(key, event, obj)
            work.add(Stage.CLUSTER, key)
        gate = (meta.get("annotations") or {}).get(ANNOTATION_IMPORT_GATE)
        status = (
            identity,
            self._offline(obj),
            gate,
            _owned_status(obj, CLUSTER_FIELDS),
            _agent_flux(obj),
        )
        if self._cluster_status.changed(key, event, status):
            work.add(Stage.CLUSTER_STATUS, key)
        targeting = (identity, labels_fingerprint(_targeting_annotations(meta)))
        if self._cluster_targeting.changed(key, event, targeting):
            self.ctx.continuations.cluster_changed(key.namespace, f"{key.namespace}/{key.name}")
            work.add_all(Stage.BUNDLE, self.scope.keys_in(self.scope.bundles, key.namespace))
        # Whatever changed, the groups' next roll-up looks at this cluster again; its labels,
        # spec (paused) or deletion change what it adds to them now.
        self.ctx.cluster_changes.record(key.namespace, f"{key.namespace}/{key.name}")
        membership = (meta.get("uid"), *identity[1:])
        if self._cluster_membership.changed(key, event, membership):
            work.add_all(Stage.GROUP_STATUS, self.scope.keys_in(self.scope.groups, key.namespace))

    def on_group(self, event: EventType, obj: Obj) -> None:
        key = Key.of(obj)
        if self._groups.changed(key, event, _identity(obj)):
            self.ctx.continuations.invalidate_workspace(key.namespace)
            self.ctx.work.add(Stage.GROUP_STATUS, key)
            self.ctx.work.add_all(
                Stage.BUNDLE, self.scope.keys_in(self.scope.bundles, key.namespace)
            )
        if self._group_status.changed(key, event, _owned_status(obj, GROUP_FIELDS)):
            self.ctx.work.add(Stage.GROUP_STATUS, key)

    def on_deployment(self, event: EventType, obj: Obj) -> None:
        placed = placement_of(obj)
        if placed is None:
            return
        bundle_ref, cluster_ref = placed
        bundle, cluster = split_ref(bundle_ref), split_ref(cluster_ref)
        work = self.ctx.work
        self.ctx.tallies.touch(bundle_ref, cluster_ref)
        work.add(Stage.BUNDLE_STATUS, bundle)
        self.ctx.wake_clusters(self.scope, (cluster_ref,))
        outcome = self.ctx.outcomes.get(bundle_ref)
        key = Key.of(obj)
        spec_changed = self._deployment_specs.changed(key, event, _identity(obj))
        if event is EventType.DELETED:
            self.ctx.own_writes.forget(key)
        elif spec_changed and self.ctx.own_writes.is_echo(obj):
            spec_changed = False
        self.ctx.own_writes.shown(key)
        placements.release_creations(self.ctx, bundle_ref)
        if spec_changed:
            self._replan((bundle,))
        elif outcome is not None and outcome.held:
            work.add(Stage.BUNDLE, bundle)
        if outcome is None or not outcome.keeps(cluster_ref):
            # No plan (yet) for its bundle, or one that does not place it here (a deployment the
            # cache showed only after the plan changed): a stray the cluster controller removes.
            work.add(Stage.CLUSTER, cluster)

    def on_namespace(self, event: EventType, obj: Obj) -> None:
        cluster = cluster_of(obj)
        if cluster is None:
            return
        if self.scope.namespace_ready(_meta(obj).get("name", "")):
            self.ctx.setups.done(self.ctx.work, cluster)
        if self._namespaces.changed(Key.of(obj), event, _identity(obj)):
            # Its deployments can (or no longer can) be written: each Bundle looks at that row.
            cluster_ref = f"{cluster.namespace}/{cluster.name}"
            self.ctx.continuations.cluster_changed(cluster.namespace, cluster_ref)
            self.ctx.work.add(Stage.CLUSTER, cluster)
            self.ctx.work.add(Stage.CLUSTER_STATUS, cluster)  # it shows the namespace
            self.ctx.work.add_all(
                Stage.BUNDLE, self.scope.keys_in(self.scope.bundles, cluster.namespace)
            )

    def on_identity(self, event: EventType, obj: Obj) -> None:
        cluster = cluster_of(obj)
        if cluster is None:
            return
        # A token Secret's data is the token controller's to write: the controller never reads it.
        body = {k: v for k, v in obj.items() if k not in _NOT_READ_OF_IDENTITIES}
        fingerprint = (
            _identity(obj),
            canonical(body),
            canonical(_meta(obj).get("ownerReferences")),
            canonical(_meta(obj).get("annotations")),
        )
        key = Key(f"{obj.get('kind')}/{_meta(obj).get('namespace')}", _meta(obj).get("name", ""))
        if self._identities.changed(key, event, fingerprint):
            self.ctx.work.add(Stage.CLUSTER, cluster)

    def on_secret(self, event: EventType, obj: Obj) -> None:
        self._on_named(self.scope.secret_users, self._secrets, event, obj)

    def on_config_map(self, event: EventType, obj: Obj) -> None:
        self._on_named(self.scope.config_map_users, self._config_maps, event, obj)

    def _on_named(self, users: ObjectUsers, seen: Changes, event: EventType, obj: Obj) -> None:
        """A Secret or ConfigMap of a workspace changed: the Bundles naming it plan again when
        what they copy of it changed, or whether it exists, or the labels that allow it."""
        key = Key.of(obj)
        naming = users.bundles_naming(key)
        if not naming:
            seen.forget(key)
            return
        meta = _meta(obj)
        fingerprint = (
            meta.get("uid"),
            obj.get("type"),
            canonical(obj.get("data")),
            canonical(obj.get("binaryData")),
            canonical(meta.get("labels")),
        )
        if seen.changed(key, event, fingerprint):
            self._replan(naming)

    def _expect_namespace(self, key: Key, event: EventType, obj: Obj) -> None:
        """A live Cluster without a ready namespace: the cluster controller is about to create
        it, and the workspace's Bundle passes wait for it
        (bundler.manager.memo.namespace_setups)."""
        setups = self.ctx.setups
        if event is EventType.DELETED or is_deleting(obj) or not is_dns1123_label(key.name):
            setups.done(self.ctx.work, key)
        elif not self.scope.namespace_ready(cluster_namespace(key.namespace, key.name)):
            setups.expect(key)

    def _replan(self, bundles: Iterable[Key]) -> None:
        """Wake Bundles for a full pass: what a capped pass left is planned from the old world."""
        for bundle in bundles:
            self.ctx.continuations.invalidate(f"{bundle.namespace}/{bundle.name}")
            self.ctx.work.add(Stage.BUNDLE, bundle)

    def _offline(self, obj: Obj) -> bool | None:
        key = Key.of(obj)
        # The scope's index handler ran before this one: it holds this very version.
        cluster = self.scope.cluster_models.get(key.namespace, key.name)
        if cluster is None:
            return None
        return self.ctx.liveness.offline(cluster, last_seen(obj))


def _agent_flux(cluster: Obj) -> tuple[object, ...]:
    """What the agent last found of its Flux (its FluxSupported condition follows it)."""
    flux = ((cluster.get("status") or {}).get("agent") or {}).get("flux")
    if not isinstance(flux, dict):
        return ()
    return tuple(str(flux.get(field)) for field in ("supported", "reason", "message"))
