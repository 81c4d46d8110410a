"""Repository credentials for the clusters: `helm.secretRef` Secrets copied into cluster namespaces.

The agent reads a BundleDeployment's `helm.secretRef` Secret from its cluster namespace, under the
same name: in pull mode it writes it next to the Flux source on its cluster, in remote mode the
source on the management cluster reads it there. So the bundle controller, before it writes a
BundleDeployment that names a Secret, copies that Secret from the workspace into the cluster
namespace: its `type` and `data`, labelled as bundler's (`bundler.dev/secret-copy`), annotated with
where it came from.

Lifetime: a copy is owned (ownerReferences) by the BundleDeployments of its namespace that use it,
so the garbage collector removes it with the last of them, and the namespace takes it with it in any
case. A BundleDeployment rewritten without naming a Secret (now or staged) gives up its ownership
at once, and the copy is deleted when no owner is left.

Writes happen only when the copy differs from what the informer shows. The sources are read from
the manager's watch of the workspace's Secrets (bundler.manager.scope), which wakes the Bundles
that name a Secret whenever it changes (bundler.manager.routing): a changed Secret reaches every
copy at once, and a missing one rejects the Bundle, naming it, until it exists again.

Only registry credentials are read and copied (bundler.core.credentials): a Bundle naming any
other Secret of its workspace - a Cluster's kubeconfig, a ServiceAccount or bootstrap token, an
unlabelled Opaque Secret - is refused (CredentialsRefusedError, naming the Secret and the rule)
before the Secret's data is used at all, and any copy of it made earlier (before the Secret's
type changed, say) is deleted from every cluster namespace.

A Secret of that name in the cluster namespace that bundler did not copy is never taken over: the
copy is blocked (CopyBlockedError), and that cluster keeps what it runs. Blocks are remembered, so
the Bundle shows them from the start of its next pass, and a blocked copy costs a read, not a
refused create, until the Secret in the way is gone.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from bundler.api.bundle import Bundle
from bundler.api.bundledeployment import BundleDeployment, DeploymentOptions
from bundler.api.resources import BUNDLE_DEPLOYMENT, SECRET
from bundler.core.credentials import credentials_refusal, refusal_message
from bundler.core.labels import (
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
    LABEL_MANAGED_BY,
    MANAGED_BY_BUNDLER,
)
from bundler.core.naming import DNS1123_LABEL_MAX, shorten_name
from bundler.core.planning import PlannedDeployment
from bundler.core.validation import bundle_ref
from bundler.errors import InvalidInputError
from bundler.manager.writes import (
    Mutation,
    create_or_update,
    delete_if_present,
    same,
    update_with_retry,
)
from bundler.runtime.host import Host
from bundler.runtime.informer import Informer
from bundler.store.errors import NotFound
from bundler.store.protocol import Obj, Store

LABEL_SECRET_COPY = "bundler.dev/secret-copy"
REPOSITORY_CREDENTIALS = "repository-credentials"
ANNOTATION_COPIED_FROM = "bundler.dev/copied-from"

# Secrets of the workspace by name, as read for one pass of one Bundle.
Sources = Mapping[str, Obj]


class CopyBlockedError(InvalidInputError):
    """A Secret that bundler did not copy has the copy's name in the cluster namespace."""


class CredentialsRefusedError(InvalidInputError):
    """The Secret a Bundle names (`secret`, in the Bundle's workspace) is not one meant as
    registry credentials."""

    def __init__(self, message: str, *, secret: str, obj: str, field: str) -> None:
        super().__init__(message, obj=obj, field=field)
        self.secret = secret


def read_sources(
    secrets: Informer,
    bundle: Bundle,
    names: Iterable[str],
    kubeconfig_of: Mapping[str, str] | None = None,
) -> dict[str, Obj]:
    """The workspace Secrets `names`, from `secrets` (the informer of the Bundle's workspace);
    InvalidInputError naming the first one missing, CredentialsRefusedError the first one that
    is not registry credentials (`kubeconfig_of`: the workspace's kubeconfig Secrets, by name,
    with their Cluster)."""
    workspace = bundle.metadata.namespace or ""
    found = {}
    for name in sorted(set(names)):
        secret = secrets.get(workspace, name)
        if secret is None:
            raise InvalidInputError(
                f"Secret {workspace}/{name} with the repository credentials does not exist",
                obj=bundle_ref(bundle),
                field="spec.helm.secretRef",
            )
        why = credentials_refusal(secret, kubeconfig_of)
        if why is not None:
            raise CredentialsRefusedError(
                refusal_message(workspace, name, why),
                secret=name,
                obj=bundle_ref(bundle),
                field="spec.helm.secretRef",
            )
        found[name] = secret
    return found


def secret_names(options: DeploymentOptions | None) -> set[str]:
    """The credentials Secret a deployment's options name (none or one)."""
    ref = options.helm.secretRef if options is not None else None
    return {ref.name} if ref is not None else set()


def _selector(workspace: str | None) -> dict[str, str]:
    labels = {LABEL_SECRET_COPY: REPOSITORY_CREDENTIALS}
    if workspace is not None:
        labels[LABEL_CLUSTER_NAMESPACE] = workspace
    return labels


class CredentialCopies:
    """The copies of one manager, seen through one informer per watched workspace (or one)."""

    def __init__(self, store: Store, host: Host, workspaces: Iterable[str | None]) -> None:
        self._store = store
        self._informers = {ws: host.informer(SECRET, None, _selector(ws)) for ws in workspaces}
        self._lock = threading.Lock()
        # Why the copy (cluster namespace, Secret name) is blocked, as last found.
        self._blocked: dict[tuple[str, str], str] = {}

    def informers(self) -> list[Informer]:
        return list(self._informers.values())

    def prepare(
        self, planned: PlannedDeployment, current: BundleDeployment | None, sources: Sources
    ) -> None:
        """Before `planned` is written: the Secret it names copied into its namespace (owned by
        `current`, the deployment as it is now, if any); CopyBlockedError when a Secret that bundler
        did not copy is in the way."""
        for name in secret_names(planned.options):
            self._put(planned, name, sources[name], current)

    def withdraw(self, workspace: str, name: str) -> int:
        """Delete every copy of the workspace Secret `workspace/name`, one refused as registry
        credentials; how many were deleted."""
        source = f"{workspace}/{name}"
        found = [
            (copy["metadata"]["namespace"], copy["metadata"]["name"])
            for informer in self._informers.values()
            for copy in informer.views()
            if (copy["metadata"].get("annotations") or {}).get(ANNOTATION_COPIED_FROM) == source
        ]
        for namespace, copy_name in found:
            delete_if_present(self._store, SECRET, copy_name, namespace)
        return len(found)

    def blocked(self, planned: PlannedDeployment) -> str | None:
        """Why the copy `planned` needs was blocked the last time it was tried, if it was."""
        names = sorted(secret_names(planned.options))
        if not names:  # most deployments name no Secret: asked for every row on every pass
            return None
        with self._lock:
            found = [self._blocked.get((planned.namespace, name)) for name in names]
        return next((why for why in found if why is not None), None)

    def settle(
        self, planned: PlannedDeployment, written: Obj, before: BundleDeployment | None
    ) -> None:
        """After `planned` was written as `written` (it was `before`): the copies its spec names
        are owned by it, and those only `before` named are given up (deleted with no owner left)."""
        meta = written["metadata"]
        uid = meta["uid"]
        named = _spec_names(written.get("spec") or {})
        owner = _owner_reference(meta["name"], uid)
        for name in sorted(named):
            self._adopt(planned, name, owner)
        if before is None:
            return
        named_before = secret_names(before.spec.options) | secret_names(before.spec.stagedOptions)
        for name in sorted(named_before - named):
            self._release(planned, name, uid)

    # -- internals ------------------------------------------------------------------------------

    def _observed(self, planned: PlannedDeployment, name: str) -> Obj | None:
        return self._informer(planned).get(planned.namespace, name)

    def _informer(self, planned: PlannedDeployment) -> Informer:
        workspace = planned.bundle.partition("/")[0]
        found = self._informers.get(workspace)
        return found if found is not None else self._informers[None]

    def _put(
        self, planned: PlannedDeployment, name: str, source: Obj, current: BundleDeployment | None
    ) -> None:
        desired = _copy(planned, name, source, current)
        where = (planned.namespace, name)
        observed = self._observed(planned, name)
        if observed is None and self._is_blocked(where):
            # The informer sees copies only: read what is in the way, rather than create again.
            observed = self._read(planned.namespace, name)
        if observed is not None and _is_copy(observed) and observed.get("type") != desired["type"]:
            # The type of a Secret cannot change: replace the copy.
            delete_if_present(self._store, SECRET, name, planned.namespace)
            observed = None
        try:
            create_or_update(self._store, SECRET, desired, observed, _syncing(desired))
        except CopyBlockedError as blocked:
            with self._lock:
                self._blocked[where] = blocked.message
            raise
        with self._lock:
            self._blocked.pop(where, None)

    def _is_blocked(self, where: tuple[str, str]) -> bool:
        with self._lock:
            return where in self._blocked

    def _read(self, namespace: str, name: str) -> Obj | None:
        try:
            return self._store.get(SECRET, name, namespace)
        except NotFound:
            return None

    def _copy_of(self, planned: PlannedDeployment, name: str) -> Obj | None:
        """The copy `name` in the planned namespace (from the store if the cache has not seen it
        yet); None when there is none, or the Secret there is not one bundler copied."""
        observed = self._observed(planned, name) or self._read(planned.namespace, name)
        return observed if observed is not None and _is_copy(observed) else None

    def _adopt(self, planned: PlannedDeployment, name: str, owner: Mapping[str, str]) -> None:
        observed = self._copy_of(planned, name)
        if observed is not None:
            update_with_retry(self._store, SECRET, observed, _adding_owner(owner))

    def _release(self, planned: PlannedDeployment, name: str, uid: str) -> None:
        observed = self._copy_of(planned, name)
        if observed is None or uid not in _owner_uids(observed):
            return
        left = update_with_retry(self._store, SECRET, observed, _dropping_owner(uid))
        if not left["metadata"].get("ownerReferences"):
            delete_if_present(self._store, SECRET, name, planned.namespace)


def _is_copy(secret: Obj) -> bool:
    """Whether bundler copied this Secret (the only ones it ever changes or deletes)."""
    labels = secret["metadata"].get("labels") or {}
    return labels.get(LABEL_SECRET_COPY) == REPOSITORY_CREDENTIALS


def _spec_names(spec: Obj) -> set[str]:
    """The credentials Secrets a BundleDeployment spec (as written) names, now or staged."""
    names = set()
    for options in (spec.get("options"), spec.get("stagedOptions")):
        ref = ((options or {}).get("helm") or {}).get("secretRef") or {}
        if ref.get("name"):
            names.add(str(ref["name"]))
    return names


def _copy(
    planned: PlannedDeployment, name: str, source: Obj, owner: BundleDeployment | None
) -> Obj:
    workspace, _, _ = planned.bundle.partition("/")
    cluster = planned.cluster.partition("/")[2]
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": planned.namespace,
        "labels": {
            LABEL_MANAGED_BY: MANAGED_BY_BUNDLER,
            LABEL_SECRET_COPY: REPOSITORY_CREDENTIALS,
            LABEL_CLUSTER_NAMESPACE: shorten_name(workspace, DNS1123_LABEL_MAX),
            LABEL_CLUSTER_NAME: shorten_name(cluster, DNS1123_LABEL_MAX),
        },
        "annotations": {ANNOTATION_COPIED_FROM: f"{workspace}/{name}"},
    }
    if owner is not None and owner.metadata.uid:
        metadata["ownerReferences"] = [_owner_reference(owner.metadata.name, owner.metadata.uid)]
    return {
        "apiVersion": SECRET.api_version,
        "kind": SECRET.kind,
        "metadata": metadata,
        "type": source.get("type") or "Opaque",
        "data": dict(source.get("data") or {}),
    }


def _syncing(desired: Obj) -> Mutation:
    """Bring a copy's labels, annotation, data and owners to `desired` (owners are only added)."""
    wanted = desired["metadata"]

    def mutate(obj: Obj) -> bool:
        meta = obj["metadata"]
        if not _is_copy(obj):
            raise CopyBlockedError(
                f"Secret {meta.get('namespace')}/{meta['name']} in the cluster namespace was not "
                "copied there by bundler and is left alone, so the repository credentials cannot "
                "be copied there: give the workspace's credentials Secret (spec.helm.secretRef) "
                "another name, or remove that Secret"
            )
        changed = False
        for field in ("labels", "annotations"):
            current = meta.setdefault(field, {})
            for key, value in wanted[field].items():
                if current.get(key) != value:
                    current[key] = value
                    changed = True
        if not same(obj.get("data") or {}, desired["data"]):
            obj["data"] = desired["data"]
            changed = True
        for owner in wanted.get("ownerReferences") or []:
            changed = _adding_owner(owner)(obj) or changed
        return changed

    return mutate


def _adding_owner(owner: Mapping[str, str]) -> Mutation:
    def mutate(obj: Obj) -> bool:
        owners = obj["metadata"].setdefault("ownerReferences", [])
        if any(o.get("uid") == owner["uid"] for o in owners):
            return False
        owners.append(dict(owner))
        return True

    return mutate


def _dropping_owner(uid: str) -> Mutation:
    def mutate(obj: Obj) -> bool:
        owners = obj["metadata"].get("ownerReferences") or []
        left = [o for o in owners if o.get("uid") != uid]
        if len(left) == len(owners):
            return False
        obj["metadata"]["ownerReferences"] = left
        return True

    return mutate


def _owner_uids(obj: Obj) -> set[str]:
    return {o.get("uid", "") for o in obj["metadata"].get("ownerReferences") or []}


def _owner_reference(name: str, uid: str) -> dict[str, str]:
    """A BundleDeployment as an owner: the garbage collector removes the copy after its owners."""
    return {
        "apiVersion": BUNDLE_DEPLOYMENT.api_version,
        "kind": BUNDLE_DEPLOYMENT.kind,
        "name": name,
        "uid": uid,
    }
