"""The planning pass as the offline commands drive it (`render`, `diff`, `explain`).

bundler.core.planning.bundle_pass is the pass; this module is its resolvers over the input
documents: management values from the inputs or the management cluster
(bundler.commands.management_values), ranges and images against the registries when the command
resolves them (credentials from the inputs' Secrets, else the Docker config), else left offline,
and dependsOn against the input Bundles of the workspace. What a resolver has to say besides its
answer (an image resolved, a management values object not found) is kept as lines for stderr.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from bundler.api.bundle import Bundle
from bundler.commands.management_values import ObjectSource, deliver, in_inputs
from bundler.commands.render_images import image_lines, resolve_images
from bundler.core.dependencies import has_selectors, resolve_dependencies, workspace_bundles
from bundler.core.images.wanted import ImageQuery, ResolvedImages
from bundler.core.management_values import ManagementReference
from bundler.core.planning import BundlePlan
from bundler.core.planning.bundle_pass import plan_pass
from bundler.core.planning.inputs import Delivered, Dependencies, ResolvedVersions
from bundler.core.planning.version_query import VersionQuery
from bundler.core.templating.templater import IN_PROCESS, Templater
from bundler.core.validation import bundle_ref, validate_bundle
from bundler.errors import BundlerError
from bundler.inputs import World
from bundler.resolution.resolvers import ImageResolverFn, VersionResolver


@dataclass
class WorldResolvers:
    """The pass's resolvers over `world`: `versions`/`images` None leave ranges and image tags
    as written; `values` None reads management values among the inputs. `lines` collects what
    is said on the way (warnings, resolutions; of images only when `say_images`), in order."""

    world: World
    versions_from: VersionResolver | None = None
    images_from: ImageResolverFn | None = None
    values: ObjectSource | None = None
    say_images: bool = True
    lines: list[str] = field(default_factory=list)

    def management_values(
        self, bundle: Bundle, references: Sequence[ManagementReference]
    ) -> Delivered:
        source = self.values or in_inputs(self.world)
        delivery = deliver(bundle, references, self.world.clusters, source)
        self.lines.extend(delivery.warnings)
        return delivery.digests

    def versions(self, bundle: Bundle, queries: Sequence[VersionQuery]) -> ResolvedVersions:
        """The concrete version of each range, asked with the credentials of its
        `helm.secretRef` Secret when the inputs hold it."""
        if self.versions_from is None:
            return {}
        workspace = bundle.metadata.namespace or ""
        resolved = {}
        for query in queries:
            secret = (
                None if query.secret is None else self.world.secret_data(workspace, query.secret)
            )
            resolved[query.key] = self.versions_from(
                query.repo, query.chart, query.constraint, secret
            )
        return resolved

    def images(self, bundle: Bundle, queries: Sequence[ImageQuery]) -> ResolvedImages | None:
        answers = None
        if self.images_from is not None:
            answers = resolve_images(bundle, list(queries), self.world, self.images_from)
        if self.say_images:
            self.lines.extend(image_lines(bundle, list(queries), answers))
        return answers

    def dependencies(self, bundle: Bundle) -> Dependencies | None:
        """`bundle`'s dependsOn resolved against the input Bundles of its workspace, as the
        manager resolves it (None: names only, nothing to resolve)."""
        if not has_selectors(bundle):
            return None
        siblings = workspace_bundles(self.world.bundles, bundle.metadata.namespace)
        return resolve_dependencies(bundle, siblings)


@dataclass(frozen=True)
class WorldPlan:
    """One Bundle's pass over the input documents: its plan, or the error that failed the whole
    Bundle (a resolver's: a range, a management values object), naming the Bundle, and what was
    said on the way."""

    bundle: Bundle
    plan: BundlePlan | None
    failure: str | None
    lines: tuple[str, ...]


def plan_world(
    world: World,
    versions: VersionResolver | None = None,
    images: ImageResolverFn | None = None,
    values: ObjectSource | None = None,
    templater: Templater = IN_PROCESS,
    say_images: bool = True,
) -> Iterator[WorldPlan]:
    """The pass for every Bundle of `world`, sorted by namespace and name. An invalid Bundle
    raises InvalidInputError (the input is wrong: the command exits 2); a resolver's error fails
    only its Bundle."""
    for bundle in sorted(world.bundles, key=lambda b: (b.metadata.namespace, b.metadata.name)):
        validate_bundle(bundle)
        resolvers = WorldResolvers(world, versions, images, values, say_images)
        try:
            plan, _ = plan_pass(bundle, world.clusters, world.groups, resolvers, templater)
        except BundlerError as failed:
            about = bundle_ref(bundle)
            named = str(failed) if failed.obj == about else f"{about}: {failed}"
            yield WorldPlan(bundle, None, named, tuple(resolvers.lines))
            continue
        yield WorldPlan(bundle, plan, None, tuple(resolvers.lines))
