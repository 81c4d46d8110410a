"""Planning: for each (bundle, targeted cluster), the BundleDeployment it should have.

The desired BundleDeployment has a deterministic name and namespace, bundler's labels, the merged
and rendered options, and the deploymentID of those options. A template error is confined to its
cluster: it is reported beside the plan and the other clusters are planned as usual. A bundle whose
own spec is invalid raises InvalidInputError before any cluster is planned.

What does not depend on the cluster is worked out once per Bundle model
(:mod:`bundler.core.planning.memo`), and clusters that agree on what the templates read share one
options model: a fleet of 1000 clusters templating its region renders three times, not 1000.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bundler.api.bundle import Bundle
from bundler.api.bundledeployment import DeploymentOptions
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.dependencies import DependsOn
from bundler.api.helm import HelmOptions
from bundler.core.deployment_id import deployment_id
from bundler.core.images.wanted import (
    ImageAnswer,
    ResolvedImages,
    answers_for,
    image_queries,
    offline_images,
)
from bundler.core.labels import (
    LABEL_BUNDLE_NAME,
    LABEL_BUNDLE_NAMESPACE,
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
)
from bundler.core.merge import deep_merge
from bundler.core.naming import bundle_deployment_name, cluster_namespace
from bundler.core.planning.memo import (
    BundleMemo,
    Contributing,
    MergedTargets,
    memo_of,
)
from bundler.core.targeting import TargetDecision, match_targets
from bundler.core.templating import TemplateContext, render_fields
from bundler.core.templating.fields import rendered_options
from bundler.core.templating.reads import read_key
from bundler.core.templating.render import context_variables, rendered_for
from bundler.core.validation import validate_bundle
from bundler.errors import TemplateError

# (repo, chart, version constraint) -> the concrete version the manager resolved it to.
ResolvedVersions = Mapping[tuple[str, str, str], str]
# A Bundle's dependsOn resolved into names (bundler.core.dependencies.resolve_dependencies).
Dependencies = Sequence[DependsOn]


def key(namespace: str | None, name: str) -> str:
    return f"{namespace}/{name}"


@dataclass(frozen=True)
class PlannedDeployment:
    bundle: str
    cluster: str
    name: str
    namespace: str
    labels: Mapping[str, str]
    options: DeploymentOptions
    deployment_id: str

    def to_object(self) -> dict[str, Any]:
        """The BundleDeployment object (spec only) as the manager writes it."""
        return {
            "apiVersion": "bundler.dev/v1alpha1",
            "kind": "BundleDeployment",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "labels": dict(self.labels),
            },
            "spec": {"options": self.options.to_wire(), "deploymentID": self.deployment_id},
        }


@dataclass(frozen=True)
class ClusterError:
    """One cluster the bundle targets but could not be planned for (a template error)."""

    bundle: str
    cluster: str
    message: str


@dataclass(frozen=True)
class BundlePlan:
    bundle: str
    deployments: tuple[PlannedDeployment, ...] = ()
    errors: tuple[ClusterError, ...] = ()
    targeted: tuple[str, ...] = field(default=())


def merged_helm(bundle: Bundle, decision: TargetDecision) -> dict[str, Any]:
    """The bundle's `spec.helm` with each contributing target's overrides laid over it, in order."""
    return deep_merge(memo_of(bundle).merged(_contributing(decision)).merged, {})


def release_namespace(bundle: Bundle, decision: TargetDecision) -> str:
    return memo_of(bundle).merged(_contributing(decision)).namespace


def template_context(
    bundle: Bundle, cluster: Cluster, images: Mapping[str, ImageAnswer] | None = None
) -> TemplateContext:
    return TemplateContext(
        cluster_name=cluster.metadata.name,
        cluster_namespace=cluster.metadata.namespace or "",
        cluster_labels=cluster.metadata.labels,
        cluster_annotations=cluster.metadata.annotations,
        cluster_values=cluster.spec.values,
        bundle_name=bundle.metadata.name,
        bundle_namespace=bundle.metadata.namespace or "",
        images=images or {},
    )


def render_options(
    bundle: Bundle,
    cluster: Cluster,
    decision: TargetDecision,
    resolved: ResolvedVersions,
    images: ResolvedImages | None = None,
    dependencies: Dependencies | None = None,
) -> DeploymentOptions:
    """Merged, templated options for one cluster. Raises TemplateError for that cluster only
    (ImageNotResolvedError when its values read an image that has no resolution). Images are
    answered by `images`; None means offline: every image shows its policy in place of a tag.
    `dependencies` is the Bundle's dependsOn resolved against its workspace
    (bundler.core.dependencies); None: the entries by name alone.

    Clusters that agree on what the templates read get the very same options (a frozen model):
    rendered once per distinct input, not once per cluster.
    """
    memo = memo_of(bundle)
    contributing = _contributing(decision)
    merged = memo.merged(contributing)
    version = resolved.get(merged.version_query, merged.version_query[2])
    context = None
    if merged.templated:
        seen = cluster_images(bundle, decision, images)
        context = template_context(bundle, cluster, seen)
    depends_on = memo.depends_on if dependencies is None else tuple(dependencies)
    key = _options_key(contributing, version, merged, context)
    key = None if key is None else (key, _dependencies_key(depends_on))
    options = memo.options(key) if key is not None else None
    if options is None:
        options = _build_options(memo, merged, version, context, depends_on)
        if key is not None:
            memo.remember(key, options)
    return options


def _dependencies_key(depends_on: Dependencies) -> Hashable:
    return tuple(
        (d.name, None if d.acceptedStates is None else tuple(d.acceptedStates)) for d in depends_on
    )


def _contributing(decision: TargetDecision) -> Contributing:
    return tuple(result.index for result in decision.contributing)


def _options_key(
    contributing: Contributing,
    version: str,
    merged: MergedTargets,
    context: TemplateContext | None,
) -> Hashable | None:
    """What the options of one cluster depend on; None when that cannot be told."""
    if context is None:
        return contributing, version
    if merged.reads is None:
        return None
    reads = read_key(merged.reads, context_variables(context))
    return None if reads is None else (contributing, version, reads)


def _build_options(
    memo: BundleMemo,
    merged: MergedTargets,
    version: str,
    context: TemplateContext | None,
    depends_on: Dependencies,
) -> DeploymentOptions:
    helm = dict(merged.helm)
    if context is not None:
        rendered = render_fields(merged.templates, context)
        helm = rendered_options(helm, rendered, merged.patches, obj=rendered_for(context))
    helm["version"] = version
    return DeploymentOptions(
        helm=HelmOptions.model_validate(helm),
        namespace=merged.namespace,
        dependsOn=list(depends_on),
        keepResources=memo.bundle.spec.keepResources,
    )


def cluster_images(
    bundle: Bundle, decision: TargetDecision, images: ResolvedImages | None
) -> dict[str, ImageAnswer]:
    """The answer for each image of `bundle` as the cluster of `decision` wants it."""
    queries = image_queries(bundle, decision)
    return answers_for(queries, offline_images(queries) if images is None else images)


# Pure functions of names, asked for every (bundle, cluster): kept for the names of a large fleet.
_deployment_name = functools.lru_cache(maxsize=4096)(bundle_deployment_name)
_cluster_namespace = functools.lru_cache(maxsize=65536)(cluster_namespace)


def plan_deployment(
    bundle: Bundle, cluster: Cluster, options: DeploymentOptions
) -> PlannedDeployment:
    workspace = bundle.metadata.namespace or ""
    return PlannedDeployment(
        bundle=key(workspace, bundle.metadata.name),
        cluster=key(cluster.metadata.namespace, cluster.metadata.name),
        name=_deployment_name(workspace, bundle.metadata.name),
        namespace=_cluster_namespace(workspace, cluster.metadata.name),
        labels={
            LABEL_BUNDLE_NAME: bundle.metadata.name,
            LABEL_BUNDLE_NAMESPACE: workspace,
            LABEL_CLUSTER_NAME: cluster.metadata.name,
            LABEL_CLUSTER_NAMESPACE: cluster.metadata.namespace or "",
        },
        options=options,
        deployment_id=deployment_id(options),
    )


def plan_bundle(
    bundle: Bundle,
    clusters: Sequence[Cluster],
    groups: Sequence[ClusterGroup],
    resolved: ResolvedVersions | None = None,
    images: ResolvedImages | None = None,
    dependencies: Dependencies | None = None,
) -> BundlePlan:
    """Every BundleDeployment `bundle` should have, sorted by cluster, plus per-cluster errors.
    `dependencies`: its dependsOn resolved against the workspace (None: by name alone)."""
    validate_bundle(bundle)
    deployments: list[PlannedDeployment] = []
    errors: list[ClusterError] = []
    targeted: list[str] = []
    bundle_key = key(bundle.metadata.namespace, bundle.metadata.name)
    for cluster in sorted(clusters, key=lambda c: (c.metadata.namespace, c.metadata.name)):
        decision = match_targets(bundle, cluster, groups)
        if not decision.deploy:
            continue
        cluster_key = key(cluster.metadata.namespace, cluster.metadata.name)
        targeted.append(cluster_key)
        try:
            options = render_options(
                bundle, cluster, decision, resolved or {}, images, dependencies
            )
        except TemplateError as err:
            errors.append(ClusterError(bundle_key, cluster_key, str(err)))
            continue
        deployments.append(plan_deployment(bundle, cluster, options))
    return BundlePlan(bundle_key, tuple(deployments), tuple(errors), tuple(targeted))
