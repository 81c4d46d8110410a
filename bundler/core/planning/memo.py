"""What planning works out once per Bundle instead of once per cluster, kept per Bundle model.

Planning a Bundle over N clusters repeats most of its work N times: the bundle's content
(`spec.helm` or `spec.kustomize`, bundler.core.content) as data, each set of contributing targets
merged over it, what its templates read, and (for clusters that agree on what the templates read)
the render, the options model and its deploymentID. A :class:`BundleMemo` keeps those per Bundle
model: models are never changed in place, and a Bundle's spec only changes with its generation, so
a memo stays true for all models of one generation of one Bundle (see `_Memos`). Memos are
bounded: at most :data:`MAX_BUNDLES` Bundles, and :data:`MAX_OPTIONS` distinct options per Bundle;
past those, planning still works, it just computes again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from bundler.api.bundle import Bundle
from bundler.api.bundledeployment import DeploymentOptions
from bundler.api.dependencies import DependsOn
from bundler.api.health import HealthCheck
from bundler.core.content import (
    ContentKind,
    bundle_content,
    content_kind,
    merge_content,
    target_content,
)
from bundler.core.health import with_namespace
from bundler.core.images.wanted import ImageQuery, image_queries
from bundler.core.naming import HELM_RELEASE_NAME_MAX, shorten_name
from bundler.core.planning.version_query import VersionQuery, query_for, version_key
from bundler.core.targeting import TargetDecision
from bundler.core.templating import has_templates
from bundler.core.templating.fields import PatchAt, templated_tree
from bundler.core.templating.reads import ReadPath
from bundler.core.templating.templater import Templater

MAX_BUNDLES = 1024
MAX_OPTIONS = 1024
#: What the rendered options a memo keeps may add up to: past it, clusters render afresh (the
#: rows of the manager keep what they use; the memo only saves work).
MAX_OPTIONS_BYTES = 16 << 20

DEFAULT_RELEASE_NAMESPACE = "default"

# Fields that steer the manager, not the release: changing them must not redeploy every cluster.
_MANAGER_ONLY_FIELDS = ("pollInterval", "disableTemplating")

#: The indexes of the targets that contribute to a cluster's options, in order.
Contributing = tuple[int, ...]


@dataclass(frozen=True)
class MergedTargets:
    """A bundle's content (`spec.helm` or `spec.kustomize`) with one set of contributing targets
    laid over it."""

    kind: ContentKind
    #: As merged, manager-only fields included (what `merged_content` gives). Never changed.
    merged: dict[str, Any]
    #: The content's options before rendering and version resolution. Never changed.
    content: dict[str, Any]
    namespace: str
    #: (repo, chart, wanted version): how the resolved version is looked up (for an OCI
    #: artifact: its url, "", the tag or range; for Git: empty).
    version_query: tuple[str, str, str]
    #: Whether there are templates to render (`${` in the templated fields, templating not
    #: disabled).
    templated: bool
    #: What a cluster's render walks: Helm's values, postRenderers (templated patches read as
    #: YAML) and commonMetadata; Kustomize's postBuild and patches.
    templates: dict[str, Any]
    #: Where those patches are (bundler.core.templating.fields).
    patches: tuple[PatchAt, ...]
    #: The contributing targets' health checks, in order, their namespaces filled in.
    health_checks: tuple[HealthCheck, ...] = ()


class BundleMemo:
    """The per-bundle work of planning one Bundle model."""

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle
        self.kind = content_kind(bundle.spec)
        self.content = bundle_content(bundle.spec)
        # By name only: selectors are resolved against the workspace (`dependencies` of planning).
        self.depends_on = tuple(
            DependsOn(name=d.name, acceptedStates=d.acceptedStates)
            for d in bundle.spec.dependsOn
            if d.name is not None
        )
        self._lock = threading.Lock()
        self._merged: dict[Contributing, MergedTargets] = {}
        self._reads: dict[Contributing, tuple[ReadPath, ...] | None] = {}
        self._needs: dict[Contributing, tuple[VersionQuery | None, tuple[ImageQuery, ...]]] = {}
        self._options: dict[Hashable, DeploymentOptions] = {}
        self._bytes = 0

    def merged(self, contributing: Contributing) -> MergedTargets:
        found = self._merged.get(contributing)
        if found is None:
            found = self._merge(contributing)
            with self._lock:
                self._merged[contributing] = found
        return found

    def needs(
        self, contributing: Contributing, decision: TargetDecision
    ) -> tuple[VersionQuery | None, tuple[ImageQuery, ...]]:
        """The range and the images a cluster these targets decide for needs resolved; asked
        for every cluster, worked out once per set of targets."""
        found = self._needs.get(contributing)
        if found is None:
            found = (
                query_for(self.merged(contributing).merged, self.kind),
                image_queries(self.bundle, decision),
            )
            with self._lock:
                self._needs[contributing] = found
        return found

    def reads(
        self, contributing: Contributing, templater: Templater
    ) -> tuple[ReadPath, ...] | None:
        """What the templates of these targets' templated fields read (None: cannot be told),
        asked of `templater` once per set of targets."""
        if contributing in self._reads:
            return self._reads[contributing]
        merged = self.merged(contributing)
        bundle = f"{self.bundle.metadata.namespace or ''}/{self.bundle.metadata.name}"
        found = templater.reads(bundle, merged.templates).paths
        with self._lock:
            self._reads[contributing] = found
        return found

    def options(self, key: Hashable) -> DeploymentOptions | None:
        return self._options.get(key)

    def remember(self, key: Hashable, options: DeploymentOptions, size: int = 0) -> None:
        """Keep `options` (whose rendered fields are `size` bytes) for clusters of the same key,
        while the memo holds fewer than MAX_OPTIONS of them and MAX_OPTIONS_BYTES in all."""
        with self._lock:
            if len(self._options) < MAX_OPTIONS and self._bytes + size <= MAX_OPTIONS_BYTES:
                self._options[key] = options
                self._bytes += size

    def _merge(self, contributing: Contributing) -> MergedTargets:
        targets = self.bundle.spec.targets
        merged = self.content
        namespace = self.bundle.spec.namespace
        checks: list[HealthCheck] = []
        for index in contributing:
            target = targets[index]
            overrides = target_content(target, self.kind)
            if overrides is not None:
                merged = merge_content(self.kind, merged, overrides)
            namespace = target.namespace or namespace
            checks.extend(target.healthChecks)
        content = {k: v for k, v in merged.items() if k not in _MANAGER_ONLY_FIELDS}
        if self.kind is ContentKind.HELM:
            # The name the HelmRelease gets (bundler.core.flux), so previews show the real one.
            content.setdefault(
                "releaseName", shorten_name(self.bundle.metadata.name, HELM_RELEASE_NAME_MAX)
            )
        disabled = bool(merged.get("disableTemplating"))
        # Patches are read as YAML only when they are rendered: checked by validate_bundle.
        templates = templated_tree({} if disabled else content)
        release_namespace = namespace or DEFAULT_RELEASE_NAMESPACE
        return MergedTargets(
            kind=self.kind,
            merged=merged,
            content=content,
            namespace=release_namespace,
            version_query=version_key(content, self.kind),
            templated=not disabled and has_templates(templates.tree),
            templates=templates.tree,
            patches=templates.patches,
            health_checks=tuple(with_namespace(c, release_namespace) for c in checks),
        )


class _Memos:
    """The memos of the most recently planned Bundles.

    A Bundle read from the API (uid and generation set) is known by its name: a new model of the
    same generation has the same spec, so it finds the memo of the last one, and a new generation
    replaces it (one memo per Bundle, however often it is read). A Bundle without them (built in
    memory, as the CLI does) is known by its model's identity.
    """

    def __init__(self, max_entries: int) -> None:
        self._max_entries = max_entries
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[Hashable, BundleMemo]] = OrderedDict()

    def of(self, bundle: Bundle) -> BundleMemo:
        slot, ident = _slot(bundle)
        with self._lock:
            entry = self._entries.get(slot)
            if entry is not None and _same(entry, ident, bundle):
                self._entries.move_to_end(slot)
                return entry[1]
        memo = BundleMemo(bundle)
        with self._lock:
            self._entries[slot] = (ident, memo)
            self._entries.move_to_end(slot)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
        return memo


def _slot(bundle: Bundle) -> tuple[Hashable, Hashable]:
    meta = bundle.metadata
    if meta.uid and meta.generation:
        return ("name", meta.namespace, meta.name), (meta.uid, meta.generation)
    return ("model", id(bundle)), None


def _same(entry: tuple[Hashable, BundleMemo], ident: Hashable, bundle: Bundle) -> bool:
    # Without an identity, the memo's own model must be this one (it holds it: the id is unique).
    return entry[0] == ident if ident is not None else entry[1].bundle is bundle


_MEMOS = _Memos(MAX_BUNDLES)


def memo_of(bundle: Bundle) -> BundleMemo:
    """The planning memo of this Bundle model."""
    return _MEMOS.of(bundle)
