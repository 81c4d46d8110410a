"""Planning: for each (bundle, targeted cluster), the BundleDeployment it should have.

The desired BundleDeployment has a deterministic name and namespace, bundler's labels, the merged
and rendered options, and the deploymentID of those options. A template error is confined to its
cluster: it is reported beside the plan and the other clusters are planned as usual. A bundle whose
own spec is invalid raises InvalidInputError before any cluster is planned.

What does not depend on the cluster is worked out once per Bundle model
(:mod:`bundler.core.planning.memo`), and clusters that agree on what the templates read share one
options model: a fleet of 1000 clusters templating its region renders three times, not 1000.
The renders a Bundle's clusters still need are asked of a templater in one batch
(:mod:`bundler.core.templating.templater`): in this process unless the caller hands in another,
such as the manager's pool of bounded worker processes.

This module is the render step of the planning pass; the decide step is
:mod:`bundler.core.planning.decide`, and :mod:`bundler.core.planning.bundle_pass` runs the three
steps with the resolvers a driver passes in.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bundler.api.bundle import Bundle
from bundler.api.bundledeployment import DeliveredValues, DeploymentOptions
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.helm import HelmOptions
from bundler.api.kustomize import KustomizeOptions
from bundler.core.content import ContentKind, with_artifact_tag
from bundler.core.deployment_id import deployment_id
from bundler.core.flux import release_object_name
from bundler.core.flux.values_copies import delivered_values
from bundler.core.images.wanted import (
    ImageAnswer,
    ResolvedImages,
    answers_for,
    image_queries,
    image_view,
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
from bundler.core.planning.decide import ClusterDecision, decide_bundle
from bundler.core.planning.held import HeldBytes, rendered_bytes
from bundler.core.planning.inputs import Delivered, Dependencies, PassInputs, ResolvedVersions
from bundler.core.planning.memo import (
    BundleMemo,
    Contributing,
    MergedTargets,
    memo_of,
)
from bundler.core.targeting import TargetDecision
from bundler.core.templating import TemplateContext
from bundler.core.templating.fields import rendered_options
from bundler.core.templating.reads import read_key
from bundler.core.templating.render import context_variables
from bundler.core.templating.templater import IN_PROCESS, RenderAnswer, RenderCall, Templater
from bundler.core.validation import validate_bundle
from bundler.errors import TemplateError


def key(namespace: str | None, name: str) -> str:
    """`namespace/name`. Interned: the manager keeps each Bundle's and Cluster's key in many rows,
    placements and indexes, which then share one string (and compare by identity first)."""
    return sys.intern(f"{namespace}/{name}")


@dataclass(frozen=True, slots=True)
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


def merged_content(bundle: Bundle, decision: TargetDecision) -> dict[str, Any]:
    """The bundle's content (`spec.helm` or `spec.kustomize`) with each contributing target's
    overrides laid over it, in order."""
    return deep_merge(memo_of(bundle).merged(_contributing(decision)).merged, {})


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
        images={name: image_view(answer) for name, answer in images.items()} if images else {},
    )


def render_options(
    bundle: Bundle,
    cluster: Cluster,
    decision: TargetDecision,
    resolved: ResolvedVersions,
    images: ResolvedImages | None = None,
    dependencies: Dependencies | None = None,
    templater: Templater = IN_PROCESS,
    delivered: Delivered | None = None,
) -> DeploymentOptions:
    """Merged, templated options for one cluster. Raises TemplateError for that cluster only
    (ImageNotResolvedError when its values read an image that has no resolution). Images are
    answered by `images`; None means offline: every image shows its policy in place of a tag.
    `dependencies` is the Bundle's dependsOn resolved against its workspace
    (bundler.core.dependencies); None: the entries by name alone. `delivered`: the digests of
    the management values objects (None: none known, as offline).
    """
    answers = render_many(
        bundle, [(cluster, decision)], resolved, images, dependencies, templater,
        delivered=delivered,
    )  # fmt: skip
    (options,) = answers
    if isinstance(options, TemplateError):
        raise options
    return options


#: Renders asked of the templater at once: each may build up to 1 MiB, so at most this many MiB
#: are in flight before what they hold is charged to the Bundle (bundler.core.planning.held).
RENDER_SLICE = 64

#: The options of one cluster, or why its values did not render.
OptionsOrError = DeploymentOptions | TemplateError


def render_many(
    bundle: Bundle,
    targeted: Sequence[tuple[Cluster, TargetDecision]],
    resolved: ResolvedVersions,
    images: ResolvedImages | None = None,
    dependencies: Dependencies | None = None,
    templater: Templater = IN_PROCESS,
    held: HeldBytes | None = None,
    delivered: Delivered | None = None,
) -> list[OptionsOrError]:
    """`render_options` for each (cluster, decision) of `bundle`, in order, with the renders they
    need asked of `templater` in one batch: an error is that cluster's answer, never raised.

    Clusters that agree on what the templates read get the very same options (a frozen model):
    rendered once per distinct input, not once per cluster. Each render is charged to `held`
    (the Bundle's allowance, :mod:`bundler.core.planning.held`) when one is given.
    """
    memo = memo_of(bundle)
    depends_on = memo.depends_on if dependencies is None else tuple(dependencies)
    inputs = _Inputs(depends_on, dict(delivered or {}))
    answers: list[OptionsOrError | None] = [None] * len(targeted)
    # each render still needed: (the merged targets, the version, the key, the clusters' indexes)
    pending: list[tuple[MergedTargets, str, Hashable | None, list[int]]] = []
    calls: list[RenderCall] = []
    by_key: dict[Hashable, list[int]] = {}
    contexts: dict[int, TemplateContext] = {}
    for index, (cluster, decision) in enumerate(targeted):
        contributing = _contributing(decision)
        merged = memo.merged(contributing)
        version = resolved.get(merged.version_query, merged.version_query[2])
        context = None
        if merged.templated:
            context = template_context(bundle, cluster, cluster_images(bundle, decision, images))
            contexts[index] = context
        key = _options_key(memo, contributing, version, merged, context, templater)
        key = None if key is None else (key, inputs.key)
        options = memo.options(key) if key is not None else None
        if options is None and context is None:
            options = _build_options(memo, merged, version, None, inputs, None)
            if key is not None:
                memo.remember(key, options)
        if options is not None:
            answers[index] = options
        elif key is not None and key in by_key:
            by_key[key].append(index)  # the same render as an earlier cluster of this batch
        else:
            assert context is not None
            indexes = [index]
            if key is not None:
                by_key[key] = indexes
            pending.append((merged, version, key, indexes))
            calls.append(RenderCall(merged.templates, context))
    # In slices: what one render may build is bounded, so what is in flight at once is too.
    for start in range(0, len(calls), RENDER_SLICE):
        rendered = templater.render(calls[start : start + RENDER_SLICE])
        for (merged, version, key, indexes), answer in zip(
            pending[start : start + RENDER_SLICE], rendered, strict=True
        ):
            first = contexts[indexes[0]]
            size = 0
            if held is not None and not isinstance(answer, TemplateError):
                size = rendered_bytes(answer)
                answer = held.charge(indexes[0], size, first.describe()) or answer
            built = _options_from(memo, merged, version, key, answer, inputs, first, size)
            for index in indexes:
                # an error names its cluster: the others that shared the render get their own
                answers[index] = (
                    built.about(contexts[index].describe())
                    if isinstance(built, TemplateError)
                    else built
                )
    return [answer for answer in answers if answer is not None]


def _options_from(
    memo: BundleMemo,
    merged: MergedTargets,
    version: str,
    key: Hashable | None,
    answer: RenderAnswer,
    inputs: _Inputs,
    context: TemplateContext,
    size: int,
) -> OptionsOrError:
    if isinstance(answer, TemplateError):
        return answer
    try:
        options = _build_options(memo, merged, version, answer, inputs, context)
    except TemplateError as err:
        return err
    if key is not None:
        memo.remember(key, options, size)
    return options


@dataclass(frozen=True)
class _Inputs:
    """What a Bundle's options take from its workspace besides the Bundle: its dependsOn resolved,
    and the digests of its management values objects."""

    depends_on: Dependencies
    delivered: Mapping[tuple[str, str], str]

    @functools.cached_property
    def key(self) -> Hashable:
        depends_on = tuple(
            (d.name, None if d.acceptedStates is None else tuple(d.acceptedStates))
            for d in self.depends_on
        )
        return depends_on, tuple(sorted(self.delivered.items()))


def _contributing(decision: TargetDecision) -> Contributing:
    return tuple(result.index for result in decision.contributing)


def _options_key(
    memo: BundleMemo,
    contributing: Contributing,
    version: str,
    merged: MergedTargets,
    context: TemplateContext | None,
    templater: Templater,
) -> Hashable | None:
    """What the options of one cluster depend on; None when that cannot be told."""
    if context is None:
        return contributing, version
    paths = memo.reads(contributing, templater)
    if paths is None:
        return None
    reads = read_key(paths, context_variables(context))
    return None if reads is None else (contributing, version, reads)


def _build_options(
    memo: BundleMemo,
    merged: MergedTargets,
    version: str,
    rendered: Mapping[str, Any] | None,
    inputs: _Inputs,
    context: TemplateContext | None,
) -> DeploymentOptions:
    """The options of one cluster; `rendered` is its render of the templated fields (None: none
    to render). TemplateError when a rendered field cannot be used (a label rendered to a map)."""
    content = dict(merged.content)
    if rendered is not None and context is not None:
        content = rendered_options(content, rendered, merged.patches, obj=context.describe())
    helm, kustomize, delivered = None, None, None
    if merged.kind is ContentKind.HELM:
        content["version"] = version
        release = release_object_name(memo.bundle.metadata.name)
        delivered = delivered_values(content.get("valuesFrom") or (), inputs.delivered, release)
        helm = HelmOptions.model_validate(content)
    else:
        kustomize = KustomizeOptions.model_validate(with_artifact_tag(content, version))
    return DeploymentOptions(
        helm=helm,
        kustomize=kustomize,
        namespace=merged.namespace,
        dependsOn=list(inputs.depends_on),
        keepResources=memo.bundle.spec.keepResources,
        managementValues=None
        if delivered is None
        else [DeliveredValues.model_validate(d) for d in delivered],
        healthChecks=list(merged.health_checks) or None,
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


def plan_decided(
    bundle: Bundle,
    decisions: Sequence[ClusterDecision],
    inputs: PassInputs,
    templater: Templater = IN_PROCESS,
) -> BundlePlan:
    """The render step without a memo: every targeted cluster of `decisions` rendered in one
    batch, sorted as `decisions` are, plus per-cluster errors."""
    targets = [(d.cluster, d.decision) for d in decisions if d.decision.deploy]
    bundle_key = key(bundle.metadata.namespace, bundle.metadata.name)
    deployments: list[PlannedDeployment] = []
    errors: list[ClusterError] = []
    answers = render_many(
        bundle,
        targets,
        inputs.resolved,
        inputs.images,
        inputs.dependencies,
        templater,
        delivered=inputs.delivered,
    )
    for (cluster, _), options in zip(targets, answers, strict=True):
        if isinstance(options, TemplateError):
            cluster_key = key(cluster.metadata.namespace, cluster.metadata.name)
            errors.append(ClusterError(bundle_key, cluster_key, str(options)))
        else:
            deployments.append(plan_deployment(bundle, cluster, options))
    targeted = tuple(key(c.metadata.namespace, c.metadata.name) for c, _ in targets)
    return BundlePlan(bundle_key, tuple(deployments), tuple(errors), targeted)


def plan_bundle(
    bundle: Bundle,
    clusters: Sequence[Cluster],
    groups: Sequence[ClusterGroup],
    resolved: ResolvedVersions | None = None,
    images: ResolvedImages | None = None,
    dependencies: Dependencies | None = None,
    templater: Templater = IN_PROCESS,
    delivered: Delivered | None = None,
) -> BundlePlan:
    """Every BundleDeployment `bundle` should have, sorted by cluster, plus per-cluster errors,
    with the inputs already resolved (bundler.core.planning.bundle_pass asks resolvers for them).
    `dependencies`: its dependsOn resolved against the workspace (None: by name alone);
    `delivered`: the digests of its management values objects (None: none known)."""
    validate_bundle(bundle)
    inputs = PassInputs(resolved or {}, images, dependencies, delivered or {})
    return plan_decided(bundle, decide_bundle(bundle, clusters, groups), inputs, templater)
