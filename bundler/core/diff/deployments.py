"""The per-cluster difference of two fleets: which BundleDeployments are created or removed, and
for the others which chart version, values, options and (when rendered) objects change.

A side is a mapping from (bundle, cluster), both `namespace/name`, to the deployment's options as
the API writes them (`spec.options`) and, when charts were rendered, its objects. A deployment's
values are diffed by path on their own; the rest of its options (namespace, repository, release
name, Flux settings) likewise, the chart version being shown apart as the headline.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bundler.core.diff.manifests import ObjectChange, diff_manifests
from bundler.core.diff.values import ChangeKind, ValueChange, diff_values

DeploymentRef = tuple[str, str]  # (bundle, cluster), each `namespace/name`


@dataclass(frozen=True)
class DeploymentSide:
    """One deployment on one side: its options (wire JSON) and, when rendered, its objects."""

    options: Mapping[str, Any]
    objects: Sequence[Mapping[str, Any]] | None = None

    @property
    def what(self) -> str:
        """What the version is of: the chart, or the manifests' artifact."""
        return "artifact" if _mapping(self.options, "kustomize") else "chart"

    @property
    def version(self) -> str | None:
        kustomize = _mapping(self.options, "kustomize")
        if kustomize:
            version = _mapping(_mapping(kustomize, "source"), "oci").get("tag")
        else:
            version = _mapping(self.options, "helm").get("version")
        return None if version is None else str(version)

    @property
    def values(self) -> Any:
        kustomize = _mapping(self.options, "kustomize")
        if kustomize:
            return _mapping(kustomize, "postBuild").get("substitute") or {}
        return _mapping(self.options, "helm").get("values") or {}

    def other_options(self) -> dict[str, Any]:
        """The options without the version and the values (chart version and values, or
        artifact tag and substitutions: shown apart)."""
        kustomize = _mapping(self.options, "kustomize")
        if not kustomize:
            helm = _without(_mapping(self.options, "helm"), "version", "values")
            return {**self.options, "helm": helm}
        shown = dict(kustomize)
        source = _mapping(kustomize, "source")
        if "oci" in source:
            shown["source"] = {**source, "oci": _without(_mapping(source, "oci"), "tag")}
        post_build = _without(_mapping(kustomize, "postBuild"), "substitute")
        if post_build:
            shown["postBuild"] = post_build
        else:
            shown.pop("postBuild", None)
        return {**self.options, "kustomize": shown}


@dataclass(frozen=True)
class DeploymentDiff:
    """What changes for one bundle on one cluster (`kind` ADDED: the deployment is created)."""

    bundle: str
    cluster: str
    kind: ChangeKind
    old_version: str | None = None
    new_version: str | None = None
    values: tuple[ValueChange, ...] = ()
    options: tuple[ValueChange, ...] = ()
    objects: tuple[ObjectChange, ...] = ()
    #: What the versions are of: chart (Helm) or artifact (Kustomize).
    what: str = "chart"

    @property
    def version_changed(self) -> bool:
        return self.kind is ChangeKind.CHANGED and self.old_version != self.new_version

    def to_data(self) -> dict[str, Any]:
        return {
            "bundle": self.bundle,
            "cluster": self.cluster,
            "change": _WORDS[self.kind],
            "oldVersion": self.old_version,
            "newVersion": self.new_version,
            "values": [change.to_data() for change in self.values],
            "options": [change.to_data() for change in self.options],
            "objects": [change.to_data() for change in self.objects],
        }


@dataclass(frozen=True)
class FleetDiff:
    """Every deployment that changes, ordered by bundle then cluster; how many do not; the error
    lines of either side (clusters that failed to render are not compared)."""

    changes: tuple[DeploymentDiff, ...]
    unchanged: int
    errors: tuple[str, ...] = field(default=())

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def counts_by_bundle(self) -> dict[str, Counter[str]]:
        """For each bundle with changes: how many deployments are created, removed, changed."""
        counts: dict[str, Counter[str]] = {}
        for change in self.changes:
            counts.setdefault(change.bundle, Counter())[_WORDS[change.kind]] += 1
        return counts

    def to_data(self) -> dict[str, Any]:
        return {
            "changed": self.changed,
            "unchanged": self.unchanged,
            "bundles": {
                bundle: dict(sorted(counts.items()))
                for bundle, counts in self.counts_by_bundle().items()
            },
            "deployments": [change.to_data() for change in self.changes],
            "errors": list(self.errors),
        }


_WORDS = {ChangeKind.ADDED: "created", ChangeKind.REMOVED: "removed", ChangeKind.CHANGED: "changed"}


def diff_fleet(
    old: Mapping[DeploymentRef, DeploymentSide],
    new: Mapping[DeploymentRef, DeploymentSide],
    errors: Sequence[str] = (),
) -> FleetDiff:
    """The difference from `old` to `new`, deployment by deployment."""
    changes: list[DeploymentDiff] = []
    unchanged = 0
    for ref in sorted(set(old) | set(new)):
        bundle, cluster = ref
        if ref not in new:
            gone = old[ref]
            objects = tuple(diff_manifests(gone.objects or [], []))
            changes.append(
                DeploymentDiff(
                    bundle,
                    cluster,
                    ChangeKind.REMOVED,
                    gone.version,
                    objects=objects,
                    what=gone.what,
                )
            )
        elif ref not in old:
            made = new[ref]
            objects = tuple(diff_manifests([], made.objects or []))
            changes.append(
                DeploymentDiff(
                    bundle,
                    cluster,
                    ChangeKind.ADDED,
                    new_version=made.version,
                    objects=objects,
                    what=made.what,
                )
            )
        else:
            change = _changed(bundle, cluster, old[ref], new[ref])
            if change is None:
                unchanged += 1
            else:
                changes.append(change)
    return FleetDiff(tuple(changes), unchanged, tuple(errors))


def _changed(
    bundle: str, cluster: str, old: DeploymentSide, new: DeploymentSide
) -> DeploymentDiff | None:
    values = diff_values(old.values, new.values)
    options = diff_values(old.other_options(), new.other_options())
    objects = (
        diff_manifests(old.objects, new.objects)
        if old.objects is not None and new.objects is not None
        else []
    )
    if old.version == new.version and not (values or options or objects):
        return None
    return DeploymentDiff(
        bundle,
        cluster,
        ChangeKind.CHANGED,
        old.version,
        new.version,
        tuple(values),
        tuple(options),
        tuple(objects),
        new.what,
    )


def _without(mapping: Mapping[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k not in names}


def _mapping(options: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    found = options.get(name)
    return found if isinstance(found, Mapping) else {}
