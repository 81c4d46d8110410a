"""Secrets the manager copies into cluster namespaces for the agents, and how long they live.

Two kinds of copies share this machinery (a `CopyKind` says what differs): repository credentials
(`helm.secretRef`, bundler.manager.copies.credentials) and management values (`valuesFrom` entries
with `source: Management`, bundler.manager.copies.management_values). The bundle controller, before
it writes a BundleDeployment, copies what its options name into its cluster namespace (`prepare`):
the source's `type` and `data`, labelled as bundler's (`bundler.dev/secret-copy: <kind>`), annotated
with where it came from. The agent of that cluster reads the copy there.

Lifetime: a copy is owned (ownerReferences) by the BundleDeployments of its namespace that name
it, so the garbage collector removes it with the last of them, and the namespace takes it with it
in any case. A BundleDeployment rewritten without naming a copy (in its options, staged options,
or whatever else its kind keeps: `settle`) gives up its ownership at once, and the copy is deleted
when no owner is left. A copy refused at its source (`withdraw`) is deleted from every cluster
namespace.

Writes happen only when the copy differs from what the informer shows (one informer per watched
workspace, selected by the kind's label), so a pass over an unchanged fleet writes nothing.

A Secret of a copy's name in the cluster namespace that bundler did not copy (or a copy of another
kind) is never taken over: the copy is blocked (CopyBlockedError), and that cluster keeps what it
runs. Blocks are remembered, so the Bundle shows them from the start of its next pass, and a
blocked copy costs a read, not a refused create, until the Secret in the way is gone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bundler.api.bundledeployment import BundleDeployment, DeploymentOptions
from bundler.api.resources import BUNDLE_DEPLOYMENT, SECRET
from bundler.core.json_equality import json_equal
from bundler.core.labels import (
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
    LABEL_MANAGED_BY,
    MANAGED_BY_BUNDLER,
)
from bundler.core.naming import DNS1123_LABEL_MAX, shorten_name
from bundler.core.planning import PlannedDeployment
from bundler.errors import InvalidInputError
from bundler.manager.writes import (
    Mutation,
    create_or_update,
    delete_if_present,
    update_with_retry,
)
from bundler.runtime.host import Host
from bundler.runtime.informer import Informer
from bundler.store.errors import NotFound
from bundler.store.protocol import Obj, Store

LABEL_SECRET_COPY = "bundler.dev/secret-copy"
ANNOTATION_COPIED_FROM = "bundler.dev/copied-from"

# The source of each copy of one pass of one Bundle, by its key (the kind's `wanted` says which):
# a Secret, or what is copied from one ({"type": ..., "data": ...}).
Sources = Mapping[str, Obj]


class CopyBlockedError(InvalidInputError):
    """A Secret that bundler did not copy has the copy's name in the cluster namespace."""


@dataclass(frozen=True)
class CopyKind:
    """What one kind of copy is: its label value, what its block messages say, and which copies
    a deployment names.

    wanted: the copies options name, as {copy name: source key}.
    named: the copies a BundleDeployment spec (as written) names and keeps.
    copied_from: the copied-from annotation for a source key of a workspace.
    """

    mark: str
    what: str
    remedy: str
    wanted: Callable[[DeploymentOptions | None], Mapping[str, str]]
    named: Callable[[Obj], set[str]]
    copied_from: Callable[[str, str], str]

    def is_copy(self, secret: Mapping[str, Any]) -> bool:
        """Whether bundler made this Secret as a copy of this kind (the only ones it ever changes
        or deletes)."""
        labels = secret["metadata"].get("labels") or {}
        return bool(labels.get(LABEL_SECRET_COPY) == self.mark)


def _selector(kind: CopyKind, workspace: str | None) -> dict[str, str]:
    labels = {LABEL_SECRET_COPY: kind.mark}
    if workspace is not None:
        labels[LABEL_CLUSTER_NAMESPACE] = workspace
    return labels


class SecretCopies:
    """The copies of one kind of one manager, seen through one informer per watched workspace (or
    one)."""

    def __init__(
        self, store: Store, host: Host, workspaces: Iterable[str | None], kind: CopyKind
    ) -> None:
        self._store = store
        self.kind = kind
        self._informers = {
            ws: host.informer(SECRET, None, _selector(kind, ws)) for ws in workspaces
        }
        self._lock = threading.Lock()
        # Why the copy (cluster namespace, Secret name) is blocked, as last found.
        self._blocked: dict[tuple[str, str], str] = {}

    def informers(self) -> list[Informer]:
        return list(self._informers.values())

    def prepare(
        self, planned: PlannedDeployment, current: BundleDeployment | None, sources: Sources
    ) -> None:
        """Before `planned` is written: the copies it names made in its namespace (owned by
        `current`, the deployment as it is now, if any); CopyBlockedError when a Secret that
        bundler did not copy is in the way."""
        for name, source in self.kind.wanted(planned.options).items():
            self._put(planned, name, source, sources[source], current)

    def withdraw(self, workspace: str, source: str) -> int:
        """Delete every copy of the source `source` of `workspace` (one refused at its source);
        how many were deleted."""
        copied_from = self.kind.copied_from(workspace, source)
        found = [
            (copy["metadata"]["namespace"], copy["metadata"]["name"])
            for informer in self._informers.values()
            for copy in informer.views()
            if (copy["metadata"].get("annotations") or {}).get(ANNOTATION_COPIED_FROM)
            == copied_from
        ]
        for namespace, copy_name in found:
            delete_if_present(self._store, SECRET, copy_name, namespace)
        return len(found)

    def blocked(self, planned: PlannedDeployment) -> str | None:
        """Why a copy `planned` needs was blocked the last time it was tried, if one was."""
        names = sorted(self.kind.wanted(planned.options))
        if not names:  # most deployments name no copy: asked for every row on every pass
            return None
        with self._lock:
            found = [self._blocked.get((planned.namespace, name)) for name in names]
        return next((why for why in found if why is not None), None)

    def settle(
        self, planned: PlannedDeployment, written: Obj, before: BundleDeployment | None
    ) -> None:
        """After `planned` was written as `written` (it was `before`): the copies its spec names
        are owned by it, and those it owned but no longer names are given up (deleted with no
        owner left)."""
        meta = written["metadata"]
        uid = meta["uid"]
        named = self.kind.named(written.get("spec") or {})
        owner = _owner_reference(meta["name"], uid)
        for name in sorted(named):
            self._adopt(planned, name, owner)
        held = self._owned_by(planned, uid)
        if before is not None:
            held |= self.kind.named(before.spec.to_wire())
        for name in sorted(held - named):
            self._release(planned, name, uid)

    # -- internals ------------------------------------------------------------------------------

    def _observed(self, planned: PlannedDeployment, name: str) -> Obj | None:
        return self._informer(planned).get(planned.namespace, name)

    def _informer(self, planned: PlannedDeployment) -> Informer:
        workspace = planned.bundle.partition("/")[0]
        found = self._informers.get(workspace)
        return found if found is not None else self._informers[None]

    def _owned_by(self, planned: PlannedDeployment, uid: str) -> set[str]:
        """The copies of the planned namespace the cache shows owned by the deployment `uid`."""
        return {
            copy["metadata"]["name"]
            for copy in self._informer(planned).views(planned.namespace)
            if uid in _owner_uids(copy)
        }

    def _put(
        self,
        planned: PlannedDeployment,
        name: str,
        key: str,
        source: Obj,
        current: BundleDeployment | None,
    ) -> None:
        desired = self._copy(planned, name, key, source, current)
        where = (planned.namespace, name)
        observed = self._observed(planned, name)
        if observed is None and self._is_blocked(where):
            # The informer sees copies only: read what is in the way, rather than create again.
            observed = self._read(planned.namespace, name)
        if (
            observed is not None
            and self.kind.is_copy(observed)
            and observed.get("type") != desired["type"]
        ):
            # The type of a Secret cannot change: replace the copy.
            delete_if_present(self._store, SECRET, name, planned.namespace)
            observed = None
        try:
            create_or_update(self._store, SECRET, desired, observed, self._syncing(desired))
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
        return observed if observed is not None and self.kind.is_copy(observed) else None

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

    def _copy(
        self,
        planned: PlannedDeployment,
        name: str,
        key: str,
        source: Obj,
        owner: BundleDeployment | None,
    ) -> Obj:
        workspace, _, _ = planned.bundle.partition("/")
        cluster = planned.cluster.partition("/")[2]
        metadata: dict[str, Any] = {
            "name": name,
            "namespace": planned.namespace,
            "labels": {
                LABEL_MANAGED_BY: MANAGED_BY_BUNDLER,
                LABEL_SECRET_COPY: self.kind.mark,
                LABEL_CLUSTER_NAMESPACE: shorten_name(workspace, DNS1123_LABEL_MAX),
                LABEL_CLUSTER_NAME: shorten_name(cluster, DNS1123_LABEL_MAX),
            },
            "annotations": {ANNOTATION_COPIED_FROM: self.kind.copied_from(workspace, key)},
        }
        if owner is not None and owner.metadata.uid:
            metadata["ownerReferences"] = [
                _owner_reference(owner.metadata.name, owner.metadata.uid)
            ]
        return {
            "apiVersion": SECRET.api_version,
            "kind": SECRET.kind,
            "metadata": metadata,
            "type": source.get("type") or "Opaque",
            "data": dict(source.get("data") or {}),
        }

    def _syncing(self, desired: Obj) -> Mutation:
        """Bring a copy's labels, annotation, data and owners to `desired` (owners are only
        added)."""
        wanted = desired["metadata"]
        kind = self.kind

        def mutate(obj: Obj) -> bool:
            meta = obj["metadata"]
            if not kind.is_copy(obj):
                raise CopyBlockedError(
                    f"Secret {meta.get('namespace')}/{meta['name']} in the cluster namespace was "
                    f"not copied there by bundler and is left alone, so {kind.what} cannot be "
                    f"copied there: {kind.remedy}"
                )
            changed = False
            for field in ("labels", "annotations"):
                current = meta.setdefault(field, {})
                for key, value in wanted[field].items():
                    if current.get(key) != value:
                        current[key] = value
                        changed = True
            if not json_equal(obj.get("data") or {}, desired["data"]):
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


def _owner_uids(obj: Mapping[str, Any]) -> set[str]:
    return {o.get("uid", "") for o in obj["metadata"].get("ownerReferences") or []}


def _owner_reference(name: str, uid: str) -> dict[str, str]:
    """A BundleDeployment as an owner: the garbage collector removes the copy after its owners."""
    return {
        "apiVersion": BUNDLE_DEPLOYMENT.api_version,
        "kind": BUNDLE_DEPLOYMENT.kind,
        "name": name,
        "uid": uid,
    }
