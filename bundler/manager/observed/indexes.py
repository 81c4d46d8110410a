"""The parsed indexes the manager keeps beside its informers, fed by informer events.

Clusters and ClusterGroups are indexed as API models (spec and metadata; status stays out, so an
unexpected status field never hides an object), BundleDeployments by bundle and by cluster namespace
(from bundler's labels), which Bundles name which credentials Secret, and two small facts kept apart
from the models: each Cluster's agent check-in time and which cluster namespaces are ready. Each
index is updated on the informer's thread before any routing handler runs, so work a change causes
always sees the change.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from bundler.api.bundledeployment import BundleDeployment, BundleDeploymentSpec
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.helm import ValuesKind, ValuesSource
from bundler.api.meta import ObjectMeta
from bundler.core.labels import (
    LABEL_BUNDLE_NAME,
    LABEL_BUNDLE_NAMESPACE,
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
)
from bundler.core.planning import key as ref
from bundler.runtime.key import Key
from bundler.store.protocol import EventType, Obj

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)
H = TypeVar("H", bound=Hashable)

LabelsFingerprint = tuple[tuple[str, str], ...]

# A cluster's group memberships as targeting sees them: group names with their labels.
Memberships = tuple[tuple[str, LabelsFingerprint], ...]


def labels_fingerprint(labels: Mapping[str, str]) -> LabelsFingerprint:
    """Labels (or annotations) as a hashable value that compares equal exactly when they do.

    The (key, value) pairs are interned: a fleet repeats a few pairs (a bundle's name, a region)
    across thousands of fingerprints, which then share one tuple per pair.
    """
    return tuple(_LABEL_PAIRS.intern(pair) for pair in sorted(labels.items()))


# What rows of a cluster are decided from, besides its groups: uid, generation, labels and
# annotations.
ClusterIdentity = tuple[str | None, int | None, LabelsFingerprint, LabelsFingerprint]


def cluster_identity(meta: ObjectMeta) -> ClusterIdentity:
    """A cluster's uid, generation, labels and annotations as one hashable value. Interned: the
    rows of every Bundle targeting the cluster (thousands of rows at scale) share one copy."""
    identity = (meta.uid, meta.generation, labels_fingerprint(meta.labels))
    return _CLUSTER_IDENTITIES.intern((*identity, labels_fingerprint(meta.annotations)))


class _Interned(Generic[H]):
    """One shared copy of each distinct value, forgetting all past `max_entries`."""

    def __init__(self, max_entries: int) -> None:
        self._max_entries = max_entries
        self._values: dict[H, H] = {}

    def intern(self, value: H) -> H:
        found = self._values.get(value)
        if found is not None:
            return found
        if len(self._values) >= self._max_entries:
            self._values = {}  # a new table: readers of the old one are unaffected
        self._values[value] = value
        return value


_LABEL_PAIRS: _Interned[tuple[str, str]] = _Interned(1 << 16)
_CLUSTER_IDENTITIES: _Interned[ClusterIdentity] = _Interned(1 << 16)


def _parse(model: type[M], obj: Obj, fields: tuple[str, ...] | None = None) -> M | None:
    body = obj if fields is None else {k: obj[k] for k in fields if k in obj}
    try:
        return _compact(model.model_validate(body))
    except ValidationError as error:
        meta = obj.get("metadata", {})
        log.warning(
            "ignoring %s %s/%s that does not parse: %s",
            model.__name__,
            meta.get("namespace"),
            meta.get("name"),
            error.errors()[0]["msg"] if error.errors() else error,
        )
        return None


def _compact(model: M, *, nested: bool = False) -> M:
    """`model` and its direct sub-models (`nested`: and theirs, and models in their lists, at
    every level) holding one shared set of the names of their set fields.

    Pydantic keeps that set per instance (up to 700 bytes each), although the models of a kind
    mostly set the same fields. A BundleDeployment's spec is compacted at every level once, when
    it is parsed (a deployment whose spec is its own, with values that name the cluster, held two
    more in its options and their Helm options); the rest of it at the top. The API models are
    frozen, so pydantic never adds to the set in place (`model_copy` copies it before changing
    it), and sharing equal sets is safe.
    """
    parts: list[BaseModel] = [model]
    parts.extend(_sub_models(model))
    while parts:
        part = parts.pop()
        names = part.__pydantic_fields_set__
        shared = _FIELD_SETS.get(frozenset(names))
        if shared is None and len(_FIELD_SETS) < _MAX_FIELD_SETS:
            shared = _FIELD_SETS[frozenset(names)] = names
        if shared is not None and shared is not names:
            object.__setattr__(part, "__pydantic_fields_set__", shared)
        if nested and part is not model:
            parts.extend(_sub_models(part))
    return model


def _sub_models(model: BaseModel) -> Iterator[BaseModel]:
    for value in model.__dict__.values():
        if isinstance(value, BaseModel):
            yield value
        elif isinstance(value, list | tuple):
            yield from (item for item in value if isinstance(item, BaseModel))


# The distinct sets of set fields seen (a handful per kind; bounded, as agents write the status
# fields they choose).
_FIELD_SETS: dict[frozenset[str], set[str]] = {}
_MAX_FIELD_SETS = 1024


def parse_cluster(obj: Obj) -> Cluster | None:
    # Status is the agent's and the manager's business, not the targeting's: never let an
    # unexpected status field hide a cluster.
    return _parse(Cluster, obj, ("apiVersion", "kind", "metadata", "spec"))


def parse_group(obj: Obj) -> ClusterGroup | None:
    return _parse(ClusterGroup, obj, ("apiVersion", "kind", "metadata", "spec"))


def parse_deployment(obj: Obj, specs: _SpecModels) -> BundleDeployment | None:
    """`obj` parsed, its spec taken from (or added to) `specs`."""
    spec = specs.parsed(obj.get("spec"))
    body = obj if spec is None else {**obj, "spec": spec}
    full = _parse(BundleDeployment, body)
    return full or _parse(BundleDeployment, body, ("apiVersion", "kind", "metadata", "spec"))


class _SpecModels:
    """Parsed BundleDeployment specs, one model per distinct spec: the manager gives every cluster
    that renders alike the same options, so a fleet's deployments hold a few distinct specs, and
    the index holds each once (models are immutable, so sharing them is safe).

    Specs are looked up by their deploymentID (a digest of the options the manager wrote) and
    taken only when equal to the spec kept with the model: an edited spec that keeps its ID is
    parsed again. Bounded: past MAX_SHARED_SPECS IDs the oldest are forgotten (and parsed again
    when seen). A spec without an ID is parsed each time."""

    def __init__(self, max_entries: int) -> None:
        self._max_entries = max_entries
        self._lock = threading.Lock()
        self._models: dict[str, tuple[object, BundleDeploymentSpec]] = {}

    def parsed(self, spec: object) -> BundleDeploymentSpec | None:
        """The model of `spec`, or None if it does not parse (the caller reports why)."""
        ident = spec.get("deploymentID") if isinstance(spec, Mapping) else None
        if isinstance(ident, str):
            with self._lock:
                kept = self._models.get(ident)
            if kept is not None and kept[0] == spec:
                return kept[1]
        try:
            found = _compact(BundleDeploymentSpec.model_validate(spec), nested=True)
        except ValidationError:
            return None
        if isinstance(ident, str):
            with self._lock:
                self._models.pop(ident, None)
                self._models[ident] = (spec, found)
                while len(self._models) > self._max_entries:
                    del self._models[next(iter(self._models))]
        return found


MAX_SHARED_SPECS = 4096


def identity_fingerprint(
    meta: ObjectMeta,
) -> tuple[str | None, int | None, LabelsFingerprint, str | None]:
    """What targeting reads of an object's metadata besides its spec (tracked by generation)."""
    return (meta.uid, meta.generation, labels_fingerprint(meta.labels), meta.deletionTimestamp)


class ModelIndex(Generic[M]):
    """Parsed models of one informer's objects, by namespace then name.

    `version` changes whenever an object is added, removed, or changes its spec, labels or
    deletion, not on status writes: caches derived from the models key on it.
    """

    def __init__(
        self, parse: Callable[[Obj], M | None], fingerprint: Callable[[M], Hashable]
    ) -> None:
        self._parse = parse
        self._fingerprint = fingerprint
        self._lock = threading.Lock()
        self._by_ns: dict[str, dict[str, M]] = {}
        self.version = 0

    def on_event(self, event: EventType, obj: Obj) -> None:
        key = Key.of(obj)
        model = None if event is EventType.DELETED else self._parse(obj)
        with self._lock:
            bucket = self._by_ns.setdefault(key.namespace, {})
            old = bucket.pop(key.name, None)
            if model is not None:
                bucket[key.name] = model
            before = None if old is None else self._fingerprint(old)
            after = None if model is None else self._fingerprint(model)
            if before != after:
                self.version += 1

    def get(self, namespace: str, name: str) -> M | None:
        with self._lock:
            return self._by_ns.get(namespace, {}).get(name)

    def in_namespace(self, namespace: str) -> list[M]:
        with self._lock:
            return list(self._by_ns.get(namespace, {}).values())


class DeploymentIndex:
    """Parsed BundleDeployments by bundle ("ns/name") and by cluster namespace, per their labels."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_bundle: dict[str, dict[str, BundleDeployment]] = {}
        self._by_namespace: dict[str, dict[str, BundleDeployment]] = {}
        self._placed: dict[Key, tuple[str, str]] = {}
        self._changes = itertools.count(1)
        self._cluster_changes: dict[str, int] = {}
        # the index's own: what it holds is the manager's, and goes with it
        self._specs = _SpecModels(MAX_SHARED_SPECS)

    def on_event(self, event: EventType, obj: Obj) -> None:
        key = Key.of(obj)
        model = None if event is EventType.DELETED else parse_deployment(obj, self._specs)
        placed = None if model is None else placement_of(obj)
        with self._lock:
            old = self._placed.pop(key, None)
            if old is not None:
                _discard(self._by_bundle, old[0], old[1])
                _discard(self._by_namespace, key.namespace, old[0])
                self._cluster_changes[old[1]] = next(self._changes)
            if model is None or placed is None:
                return
            self._cluster_changes[placed[1]] = next(self._changes)
            self._placed[key] = placed
            self._by_bundle.setdefault(placed[0], {})[placed[1]] = model
            self._by_namespace.setdefault(key.namespace, {})[placed[0]] = model

    def of_bundle(self, bundle: str) -> dict[str, BundleDeployment]:
        """The bundle's deployments by cluster key."""
        with self._lock:
            return dict(self._by_bundle.get(bundle, {}))

    def in_namespace(self, namespace: str) -> dict[str, BundleDeployment]:
        """The deployments in one cluster namespace by bundle key."""
        with self._lock:
            return dict(self._by_namespace.get(namespace, {}))

    def change_of(self, cluster: str) -> int:
        """A number that changes whenever a deployment of `cluster` ("ns/name") does, and is
        never given to another change (0: none seen)."""
        return self._cluster_changes.get(cluster, 0)


def _discard(buckets: dict[str, dict[str, BundleDeployment]], bucket: str, name: str) -> None:
    """Remove one entry, and its bucket once empty (deleted bundles and clusters leave nothing)."""
    found = buckets.get(bucket)
    if found is None:
        return
    found.pop(name, None)
    if not found:
        del buckets[bucket]


class ObjectUsers:
    """The Bundles that name each object of their workspace (as `names_of` reads a raw Bundle),
    read from the raw objects so that a Bundle that does not parse still counts: a change of the
    object must wake it like any other change."""

    def __init__(self, names_of: Callable[[Obj], frozenset[str]]) -> None:
        self._names_of = names_of
        self._lock = threading.Lock()
        self._named: dict[Key, frozenset[str]] = {}
        self._users: dict[Key, set[str]] = {}

    def on_event(self, event: EventType, obj: Obj) -> None:
        bundle = Key.of(obj)
        names = frozenset() if event is EventType.DELETED else self._names_of(obj)
        with self._lock:
            before = self._named.pop(bundle, frozenset())
            if names:
                self._named[bundle] = names
            for name in before - names:
                named = Key(bundle.namespace, name)
                users = self._users.get(named, set())
                users.discard(bundle.name)
                if not users:
                    self._users.pop(named, None)
            for name in names - before:
                self._users.setdefault(Key(bundle.namespace, name), set()).add(bundle.name)

    def bundles_naming(self, named: Key) -> list[Key]:
        """The Bundles of the object's namespace that name it, sorted."""
        with self._lock:
            users = sorted(self._users.get(named, ()))
        return [Key(named.namespace, name) for name in users]


def credential_secrets(bundle: Obj) -> frozenset[str]:
    """The Secret names a raw Bundle gives as `helm.secretRef` or a `kustomize.source`'s
    `secretRef`, in its spec or any target, or as an image's `secretRef`."""
    spec = _mapping(bundle, "spec")
    holders = _helm_holders(spec)
    for kustomize in _holders(spec, "kustomize"):
        source = _mapping(kustomize, "source")
        holders.extend((_mapping(source, "oci"), _mapping(source, "git")))
    images = spec.get("images")
    if isinstance(images, list):
        holders.extend(image for image in images if isinstance(image, Mapping))
    names = (_mapping(holder, "secretRef").get("name") for holder in holders)
    return frozenset(name for name in names if isinstance(name, str) and name)


def management_values(bundle: Obj, kind: str) -> frozenset[str]:
    """The names of the objects of `kind` a raw Bundle names in `valuesFrom` entries with
    `source: Management`, in its spec or any target."""
    names = set()
    for helm in _helm_holders(_mapping(bundle, "spec")):
        entries = helm.get("valuesFrom")
        for entry in entries if isinstance(entries, list) else ():
            if not isinstance(entry, Mapping) or entry.get("kind") != kind:
                continue
            name = entry.get("name")
            if entry.get("source") == ValuesSource.MANAGEMENT.value and isinstance(name, str):
                names.add(name)
    return frozenset(name for name in names if name)


def named_secrets(bundle: Obj) -> frozenset[str]:
    """The Secrets of its workspace a raw Bundle names: credentials and management values."""
    return credential_secrets(bundle) | management_values(bundle, ValuesKind.SECRET.value)


def named_config_maps(bundle: Obj) -> frozenset[str]:
    """The ConfigMaps of its workspace a raw Bundle names: management values."""
    return management_values(bundle, ValuesKind.CONFIG_MAP.value)


def _helm_holders(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """`spec.helm` and each target's `helm` of a raw Bundle spec, those that are mappings."""
    return _holders(spec, "helm")


def _holders(spec: Mapping[str, Any], field: str) -> list[Mapping[str, Any]]:
    """`spec.<field>` and each target's `<field>` of a raw Bundle spec (empty when not
    mappings)."""
    holders = [_mapping(spec, field)]
    targets = spec.get("targets")
    if isinstance(targets, list):
        holders.extend(_mapping(target, field) for target in targets)
    return holders


def _mapping(obj: object, name: str) -> Mapping[str, Any]:
    """`obj[name]` when both are mappings, else empty (raw input may be malformed)."""
    value = obj.get(name) if isinstance(obj, Mapping) else None
    return value if isinstance(value, Mapping) else {}


class AgentCheckIns:
    """`status.agent.lastSeen` of each Cluster: the agent's heartbeat, kept out of the models."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[Key, str | None] = {}

    def on_event(self, event: EventType, obj: Obj) -> None:
        key = Key.of(obj)
        with self._lock:
            if event is EventType.DELETED:
                self._seen.pop(key, None)
            else:
                self._seen[key] = last_seen(obj)

    def get(self, key: Key) -> str | None:
        with self._lock:
            return self._seen.get(key)


class ReadyNamespaces:
    """Names of the watched namespaces that exist and are not terminating."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ready: set[str] = set()

    def on_event(self, event: EventType, obj: Obj) -> None:
        meta = obj.get("metadata", {})
        with self._lock:
            if event is EventType.DELETED or meta.get("deletionTimestamp"):
                self._ready.discard(meta["name"])
            else:
                self._ready.add(meta["name"])

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return name in self._ready


def last_seen(cluster: Obj) -> str | None:
    agent = (cluster.get("status") or {}).get("agent") or {}
    seen = agent.get("lastSeen")
    return seen if isinstance(seen, str) else None


def placement_of(obj: Obj) -> tuple[str, str] | None:
    """(bundle key, cluster key) of a BundleDeployment from bundler's labels, if it has them."""
    labels = obj.get("metadata", {}).get("labels") or {}
    parts = [
        labels.get(name)
        for name in (
            LABEL_BUNDLE_NAMESPACE,
            LABEL_BUNDLE_NAME,
            LABEL_CLUSTER_NAMESPACE,
            LABEL_CLUSTER_NAME,
        )
    ]
    if not all(parts):
        return None
    return ref(parts[0], str(parts[1])), ref(parts[2], str(parts[3]))


def cluster_of(obj: Obj) -> Key | None:
    """The Cluster an identity object or namespace belongs to, from bundler's labels."""
    labels = obj.get("metadata", {}).get("labels") or {}
    workspace, name = labels.get(LABEL_CLUSTER_NAMESPACE), labels.get(LABEL_CLUSTER_NAME)
    return Key(workspace, name) if workspace and name else None
