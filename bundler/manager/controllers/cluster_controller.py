"""The cluster controller: a Cluster's namespace, its agent's identity, and their cleanup.

One pass: make sure the cleanup finalizer is on the Cluster; create (or repair) the cluster
namespace and, in pull mode, the agent identity (bundler.core.agent.identity) from what the
informers show (before the first identity, the ClusterRole every agent's binding names, read by
name once per start and resync), deleting what an older manager made in its place; in remote
mode delete that identity once the pull agent's handover is done
(bundler.core.handover.pull_identity_step), then read each of its objects back and, once none is
left, say so on the Cluster (the annotation the remote agent waits for before it copies the
kubeconfig there); in pull mode make no identity while a remote kubeconfig copy is still in the
namespace; and delete BundleDeployments in the namespace whose
Bundle is gone or no longer targets the cluster (`status.namespace` is the Cluster status
roll-up's, written with it: bundler.manager.controllers.status_controllers). Repairs touch only what
the manager owns (its labels and annotations, owners, the body fields it sets), so the token
Secret's data and the annotations Kubernetes adds stay; an object that differs where Kubernetes
allows no update is deleted and created again.

Deleting a Cluster deletes its namespace, which takes its BundleDeployments and identity with it,
and the workspace Role and RoleBinding; then the finalizer is removed.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from bundler.api.resources import (
    BUNDLE_DEPLOYMENT,
    CLUSTER,
    CLUSTER_ROLE,
    NAMESPACE,
    ROLE,
    ROLE_BINDING,
    SECRET,
    SERVICE_ACCOUNT,
    Resource,
)
from bundler.core.agent.identity import (
    IdentityObject,
    agent_identity,
    agent_namespace_role,
    is_identity_object,
    must_recreate,
    namespace_object,
    retired_identity,
    workspace_role_name,
)
from bundler.core.handover import (
    ANNOTATION_PULL_IDENTITY_REMOVED,
    KUBECONFIG_COPY_MARK,
    LABEL_KUBECONFIG_COPY,
    PullIdentityStep,
    identity_removed_stamp,
    pull_identity_removed,
    pull_identity_step,
)
from bundler.core.json_equality import json_equal
from bundler.core.naming import cluster_namespace, is_dns1123_label
from bundler.core.planning import key as ref
from bundler.manager.context import Context, split_ref
from bundler.manager.observed.scope import Scope
from bundler.manager.writes import (
    adding_finalizer,
    create_or_update,
    delete_if_present,
    has_finalizer,
    is_deleting,
    removing_finalizer,
    update_with_retry,
)
from bundler.runtime.controller import Result
from bundler.runtime.informer import Informer
from bundler.runtime.key import Key
from bundler.store.errors import NotFound
from bundler.store.protocol import Obj

CLUSTER_FINALIZER = "bundler.dev/cluster-cleanup"

# How long to wait for the namespace of a deleted namesake Cluster to finish terminating.
TERMINATING_NAMESPACE_RETRY = 5.0
# How soon to look again at a handover: identity objects still there, a kubeconfig copy not gone.
HANDOVER_RETRY = 2.0

_ENVELOPE = ("apiVersion", "kind", "metadata")


class ClusterController:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._role_lock = threading.Lock()
        self._role_checked = False

    def recheck_agent_role(self) -> None:
        """The shared agent ClusterRole is read (and repaired) again before the next identity."""
        with self._role_lock:
            self._role_checked = False

    def reconcile(self, key: Key) -> Result | None:
        written: list[bool] = []
        try:
            return self._reconcile(key, written)
        finally:
            scope = self.ctx.scopes.of(key.namespace)
            ready = scope is not None and scope.namespace_ready(
                cluster_namespace(key.namespace, key.name)
            )
            # A namespace this pass wrote ends the wait when its echo shows it ready (routing).
            if ready or not written:
                self.ctx.setups.done(self.ctx.work, key)

    def _reconcile(self, key: Key, written: list[bool]) -> Result | None:
        """One pass; `written` gets an entry once it has written the cluster namespace."""
        scope = self.ctx.scopes.of(key.namespace)
        if scope is None:
            return None
        observed = scope.clusters.get(key.namespace, key.name)
        if observed is None:
            return None
        if not is_dns1123_label(key.name):
            return None  # nothing can be set up under this name; the status controller says why
        namespace = cluster_namespace(key.namespace, key.name)
        if is_deleting(observed):
            self._finalize(observed, key, namespace)
            return None
        store = self.ctx.store
        observed = update_with_retry(store, CLUSTER, observed, adding_finalizer(CLUSTER_FINALIZER))
        current_namespace = scope.namespaces.get(None, namespace)
        if current_namespace is not None and is_deleting(current_namespace):
            return Result(requeue_after=TERMINATING_NAMESPACE_RETRY)
        wanted_namespace = namespace_object(key.namespace, key.name)
        if _ensure(self.ctx, NAMESPACE, wanted_namespace, current_namespace):
            written.append(True)
        identity = agent_identity(key.namespace, key.name, observed["metadata"].get("uid"))
        retired = retired_identity(key.namespace, key.name)
        step = pull_identity_step(observed)
        result = None
        if step is PullIdentityStep.ENSURE:
            if self._kubeconfig_copied(scope, observed, identity, namespace):
                result = Result(requeue_after=HANDOVER_RETRY)
            else:
                self._ensure_identity(scope, identity)
            self._remove_identity(scope, retired)
        elif step is PullIdentityStep.REMOVE:
            self._remove_identity(scope, (*retired, *identity))
            if not self._say_identity_removed(observed, (*retired, *identity)):
                result = Result(requeue_after=HANDOVER_RETRY)
        self._remove_strays(scope, key, namespace)
        return result

    def _kubeconfig_copied(
        self, scope: Scope, observed: Obj, identity: tuple[IdentityObject, ...], namespace: str
    ) -> bool:
        """Whether a remote agent's kubeconfig copy is still in the cluster namespace, where a pull
        identity is about to be made: seen in the cache (whose deletion event wakes the Cluster
        again), else asked of the API server. Neither is asked for an identity that is all
        there (it was made after the copy had gone), nor the API server for a Cluster the
        manager never said had no pull identity (none was ever copied for it)."""
        if all(_observed(scope, wanted) is not None for wanted in identity):
            return False
        if scope.kubeconfig_copies.views(namespace):
            return True
        annotations = observed["metadata"].get("annotations") or {}
        if ANNOTATION_PULL_IDENTITY_REMOVED not in annotations:
            return False
        marked = {LABEL_KUBECONFIG_COPY: KUBECONFIG_COPY_MARK}
        return bool(self.ctx.store.list(SECRET, namespace=namespace, labels=marked).items)

    def _say_identity_removed(self, observed: Obj, identity: tuple[IdentityObject, ...]) -> bool:
        """Once the API server has none of the pull identity's objects, annotate the Cluster with
        its generation (the remote agent copies the kubeconfig only then); False while some
        object is still there."""
        if pull_identity_removed(observed):
            return True
        for wanted in identity:
            try:
                self.ctx.store.get(wanted.res, wanted.name, wanted.namespace)
            except NotFound:
                continue
            return False
        stamp = identity_removed_stamp(observed)

        def stamping(obj: Obj) -> bool:
            # Only for the generation verified: a Cluster changed meanwhile is looked at again.
            if identity_removed_stamp(obj) != stamp or pull_identity_step(obj) is not (
                PullIdentityStep.REMOVE
            ):
                return False
            annotations = obj["metadata"].setdefault("annotations", {})
            if annotations.get(ANNOTATION_PULL_IDENTITY_REMOVED) == stamp:
                return False
            annotations[ANNOTATION_PULL_IDENTITY_REMOVED] = stamp
            return True

        update_with_retry(self.ctx.store, CLUSTER, observed, stamping)
        return True

    def _ensure_identity(self, scope: Scope, identity: tuple[IdentityObject, ...]) -> None:
        self._ensure_agent_role()
        for wanted in identity:
            current = _observed(scope, wanted)
            if current is not None and must_recreate(wanted, current):
                delete_if_present(self.ctx.store, wanted.res, wanted.name, wanted.namespace)
                current = None
            _ensure(self.ctx, wanted.res, wanted.body, current)

    def _ensure_agent_role(self) -> None:
        """Write the ClusterRole the agents' RoleBindings name, once per manager (and resync),
        before the first of them: read by name, no informer for one object."""
        with self._role_lock:
            if self._role_checked:
                return
            wanted = agent_namespace_role()
            try:
                current: Obj | None = self.ctx.store.get(CLUSTER_ROLE, wanted["metadata"]["name"])
            except NotFound:
                current = None
            _ensure(self.ctx, CLUSTER_ROLE, wanted, current)
            self._role_checked = True

    def _remove_identity(self, scope: Scope, identity: tuple[IdentityObject, ...]) -> None:
        """Delete the pull identity objects the manager made: each at the name and in the
        namespace computed from the Cluster, and only while it carries this Cluster's labels.
        The token goes first, so no credential outlives the rights it carried."""
        for wanted in reversed(identity):
            current = _observed(scope, wanted)
            if current is None or is_deleting(current) or not is_identity_object(wanted, current):
                continue
            delete_if_present(self.ctx.store, wanted.res, wanted.name, wanted.namespace)

    def _remove_strays(self, scope: Scope, key: Key, namespace: str) -> None:
        """Delete deployments of Bundles that are gone or whose plan no longer targets us."""
        cluster = ref(key.namespace, key.name)
        # Deployments first: a Bundle is in the cache before the manager writes its deployments,
        # so any deployment seen here has its Bundle among those read after.
        here = scope.deployment_models.in_namespace(namespace)
        bundles = set(scope.keys_in(scope.bundles, key.namespace))
        for bundle_ref, deployment in here.items():
            gone = split_ref(bundle_ref) not in bundles
            outcome = self.ctx.outcomes.get(bundle_ref)
            untargeted = outcome is not None and not outcome.keeps(cluster)
            if (gone or untargeted) and not deployment.metadata.deletionTimestamp:
                delete_if_present(
                    self.ctx.store,
                    BUNDLE_DEPLOYMENT,
                    deployment.metadata.name,
                    deployment.metadata.namespace,
                )

    def _finalize(self, observed: Obj, key: Key, namespace: str) -> None:
        self.ctx.liveness.forget(ref(key.namespace, key.name))
        if not has_finalizer(observed, CLUSTER_FINALIZER):
            return
        store = self.ctx.store
        delete_if_present(store, NAMESPACE, namespace, None)
        role = workspace_role_name(key.name)
        delete_if_present(store, ROLE_BINDING, role, key.namespace)
        delete_if_present(store, ROLE, role, key.namespace)
        update_with_retry(store, CLUSTER, observed, removing_finalizer(CLUSTER_FINALIZER))


def _observed(scope: Scope, wanted: IdentityObject) -> Obj | None:
    informers: Mapping[Resource, Informer] = {
        SERVICE_ACCOUNT: scope.service_accounts,
        SECRET: scope.agent_tokens,
        ROLE: scope.roles,
        ROLE_BINDING: scope.role_bindings,
    }
    return informers[wanted.res].get(wanted.namespace, wanted.name)


def _ensure(ctx: Context, res: Resource, desired: Obj, observed: Obj | None) -> bool:
    """Create `desired`, or bring the observed object's labels, annotations, owners and body to it
    (other labels and annotations, and fields `desired` does not set, are left as they are);
    True if it wrote."""

    def mutate(obj: Obj) -> bool:
        changed = False
        meta, wanted_meta = obj["metadata"], desired["metadata"]
        for field in ("labels", "annotations"):
            current = meta.get(field) or {}
            stale = {k: v for k, v in (wanted_meta.get(field) or {}).items() if current.get(k) != v}
            if stale:
                meta[field] = {**current, **stale}
                changed = True
        owners = wanted_meta.get("ownerReferences")
        if owners and not json_equal(meta.get("ownerReferences"), owners):
            meta["ownerReferences"] = owners
            changed = True
        for field, value in desired.items():
            if field not in _ENVELOPE and not json_equal(obj.get(field), value):
                obj[field] = value
                changed = True
        return changed

    return create_or_update(ctx.store, res, desired, observed, mutate) is not None
