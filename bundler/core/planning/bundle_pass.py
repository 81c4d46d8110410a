"""The planning pass over one Bundle: decide, resolve, render; the one every driver runs.

    decide   bundler.core.planning.decide       which clusters; which ranges, images, values
    resolve  the Resolvers the driver passes    management values, versions, images, dependsOn
    render   bundler.core.planning (render_many) options per cluster, in one templater batch

The steps are pure; what they need from outside (registries, the workspace's objects) is asked of
the `Resolvers` the driver hands in, in a fixed order, so every driver fails a Bundle for the same
first reason. The drivers: the manager (bundler.manager.controllers.bundle_inputs; its row memo,
bundler.manager.memo.rows, keeps decisions and rows between passes, and a resolver's error is the
Bundle's rejection) and the offline commands `render`, `diff` and `explain`
(bundler.commands.offline_pass, where it is an error line).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from bundler.api.bundle import Bundle
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.core.images.wanted import ImageQuery, ResolvedImages
from bundler.core.management_values import ManagementReference
from bundler.core.planning import BundlePlan, plan_decided
from bundler.core.planning.decide import (
    ClusterDecision,
    decide_bundle,
    deciding_references,
    version_queries,
    wanted_images,
)
from bundler.core.planning.inputs import Delivered, Dependencies, PassInputs, ResolvedVersions
from bundler.core.planning.version_query import VersionQuery
from bundler.core.templating.templater import IN_PROCESS, Templater
from bundler.core.validation import validate_bundle


class Resolvers(Protocol):
    """What a pass needs from outside the Bundle; each may raise a BundlerError, which fails the
    whole Bundle for this pass (the driver says how)."""

    def management_values(
        self, bundle: Bundle, references: Sequence[ManagementReference]
    ) -> Delivered:
        """The digest of each management values object the references name that exists."""
        ...

    def versions(self, bundle: Bundle, queries: Sequence[VersionQuery]) -> ResolvedVersions:
        """A concrete version for each range (an empty mapping: left as written, offline)."""
        ...

    def images(self, bundle: Bundle, queries: Sequence[ImageQuery]) -> ResolvedImages | None:
        """An answer for each image (None: offline, each shows its policy in place of a tag)."""
        ...

    def dependencies(self, bundle: Bundle) -> Dependencies | None:
        """The Bundle's dependsOn resolved against its workspace (None: by name alone)."""
        ...


def resolve_inputs(
    bundle: Bundle, decisions: Sequence[ClusterDecision], resolvers: Resolvers
) -> PassInputs:
    """Ask `resolvers` what the targeted clusters need, in the pass's order; their errors
    propagate."""
    references = deciding_references(bundle, decisions)
    delivered = resolvers.management_values(bundle, references) if references else {}
    resolved = resolvers.versions(bundle, version_queries(decisions))
    images = resolvers.images(bundle, wanted_images(decisions))
    return PassInputs(resolved, images, resolvers.dependencies(bundle), delivered)


def plan_pass(
    bundle: Bundle,
    clusters: Sequence[Cluster],
    groups: Sequence[ClusterGroup],
    resolvers: Resolvers,
    templater: Templater = IN_PROCESS,
) -> tuple[BundlePlan, PassInputs]:
    """The whole pass for one Bundle, uncached: validate (InvalidInputError), decide, resolve
    (the resolvers' errors propagate), render (a TemplateError stays with its cluster)."""
    validate_bundle(bundle)
    decisions = decide_bundle(bundle, clusters, groups)
    inputs = resolve_inputs(bundle, decisions, resolvers)
    return plan_decided(bundle, decisions, inputs, templater), inputs
