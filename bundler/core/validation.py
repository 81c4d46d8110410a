"""Semantic checks beyond the schema: object metadata as the API server checks it, and a Bundle's
selectors, repository URLs, chart and object names, and versions.

Every failure is an InvalidInputError that names the bundle and the field path, so the CLI can point
at the document and a controller can put the message on the Bundle's Ready condition.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError

from bundler.api.bundle import Bundle
from bundler.api.cluster import Cluster
from bundler.api.helm import HelmOptions
from bundler.api.images import BundleImage
from bundler.api.meta import ObjectMeta
from bundler.api.selector import LabelSelector
from bundler.core.agent.identity import AGENT_TOKEN_SECRET
from bundler.core.content import (
    ContentKind,
    bundle_content,
    content_kind,
    merge_content,
    target_content,
)
from bundler.core.flux.release import UnsupportedOptionError, check_release_options
from bundler.core.flux.source import (
    RepoError,
    SourceOptionError,
    check_source_options,
    source_for,
)
from bundler.core.health import check_health_check
from bundler.core.images import check_policy, effective_image
from bundler.core.images.filters import image_field
from bundler.core.kustomize_checks import check_kustomize
from bundler.core.merge import merge_helm
from bundler.core.naming import (
    HELM_RELEASE_NAME_MAX,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_helm_release_name,
)
from bundler.core.schedule import compile_schedule
from bundler.core.selectors import validate_annotation_keys, validate_labels, validate_selector
from bundler.core.templating.fields import read_patch, templated_patches
from bundler.core.versions import is_exact_version, parse_constraint
from bundler.errors import InvalidInputError

REPO_SCHEMES = ("https://", "http://", "oci://")
_RELEASE_NAME_RULE = (
    "a valid Helm release name (lowercase letters, digits, '-' and '.', at most "
    f"{HELM_RELEASE_NAME_MAX} characters)"
)
# Helm's own rule for chart names; in an OCI registry the name is also a repository path component.
_CHART_NAME_RE = re.compile(r"[A-Za-z0-9._-]+")
_OBJECT_NAME_RULE = (
    "a valid name (DNS-1123 subdomain: lowercase alphanumerics, '-' and '.', at most 253 "
    "characters)"
)


def validate_metadata(meta: ObjectMeta, *, obj: str) -> None:
    """Name, namespace, labels and annotation keys, as the API server checks them on create."""
    _check_object_name(obj, "metadata.name", meta.name)
    if meta.namespace is not None:
        _check_namespace(obj, "metadata.namespace", meta.namespace)
    try:
        validate_labels(meta.labels, field="metadata.labels")
        validate_annotation_keys(meta.annotations, field="metadata.annotations")
    except InvalidInputError as err:
        raise InvalidInputError(err.message, obj=obj, field=err.field) from None


CLUSTER_NAME_RULE = (
    "a Cluster's name is written into label values: at most 63 lowercase letters, digits and '-'"
)


def cluster_name_problem(cluster: Cluster) -> str | None:
    """Why a Cluster cannot be deployed to under its name, or None (as Cluster API: a DNS label)."""
    return None if is_dns1123_label(cluster.metadata.name) else CLUSTER_NAME_RULE


def validate_cluster(cluster: Cluster, *, obj: str) -> None:
    """A Cluster's name must fit a label value, and its kubeconfig Secret a Secret's name."""
    if problem := cluster_name_problem(cluster):
        raise InvalidInputError(
            f"{cluster.metadata.name!r}: {problem}", obj=obj, field="metadata.name"
        )
    if cluster.spec.kubeConfigSecret is not None:
        _check_object_name(obj, "spec.kubeConfigSecret", cluster.spec.kubeConfigSecret)
    if cluster.spec.schedule is not None:
        compile_schedule(cluster.spec.schedule, obj=obj, field="spec.schedule")


def bundle_of(observed: Mapping[str, Any]) -> Bundle:
    """The Bundle an object served by the API is; InvalidInputError naming the first field that
    does not parse."""
    body = {k: observed[k] for k in ("apiVersion", "kind", "metadata", "spec") if k in observed}
    try:
        return Bundle.model_validate(body)
    except ValidationError as error:
        meta = observed["metadata"]
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InvalidInputError(
            first["msg"], obj=f"Bundle {meta.get('namespace')}/{meta['name']}", field=where
        ) from None


def bundle_ref(bundle: Bundle) -> str:
    return f"Bundle {bundle.metadata.namespace}/{bundle.metadata.name}"


def validate_bundle(bundle: Bundle) -> None:
    obj = bundle_ref(bundle)
    for path, selector in _selectors(bundle):
        try:
            validate_selector(selector, field=path)
        except InvalidInputError as err:
            raise InvalidInputError(err.message, obj=obj, field=err.field or path) from None
    _check_content(obj, bundle)
    _check_target_names(obj, bundle)
    _check_images(obj, bundle)
    _check_gates(obj, bundle)
    for i, target in enumerate(bundle.spec.targets):
        if target.namespace is not None:
            _check_namespace(obj, f"spec.targets[{i}].namespace", target.namespace)
    if bundle.spec.namespace is not None:
        _check_namespace(obj, "spec.namespace", bundle.spec.namespace)
    for path, name in _references(bundle):
        _check_object_name(obj, path, name)
    for i, dep in enumerate(bundle.spec.dependsOn):
        if (dep.name is None) == (dep.selector is None):
            raise InvalidInputError(
                "give either name or selector (a Bundle by name, or the Bundles a label selector "
                "picks)",
                obj=obj,
                field=f"spec.dependsOn[{i}]",
            )
        if dep.name == bundle.metadata.name:
            raise InvalidInputError(
                "a bundle cannot depend on itself", obj=obj, field=f"spec.dependsOn[{i}].name"
            )
        states = dep.acceptedStates or []
        if len(set(states)) != len(states):
            raise InvalidInputError(
                "lists a state twice", obj=obj, field=f"spec.dependsOn[{i}].acceptedStates"
            )


def _check_content(obj: str, bundle: Bundle) -> None:
    """Exactly one of spec.helm and spec.kustomize, the targets override that one, and it and
    each target's merged result are usable."""
    spec = bundle.spec
    if (spec.helm is None) == (spec.kustomize is None):
        raise InvalidInputError(
            "give exactly one of spec.helm (a Helm chart) and spec.kustomize (manifests or a "
            f"Kustomize overlay){', not both' if spec.helm is not None else ''}",
            obj=obj,
            field="spec.kustomize" if spec.helm is not None else "spec.helm",
        )
    kind = content_kind(spec)
    other = ContentKind.HELM if kind is ContentKind.KUSTOMIZE else ContentKind.KUSTOMIZE
    for i, target in enumerate(spec.targets):
        if target_content(target, other) is not None:
            raise InvalidInputError(
                f"this Bundle deploys with spec.{kind}: override it with {kind}, not {other}",
                obj=obj,
                field=f"spec.targets[{i}].{other}",
            )
    if spec.helm is not None:
        _check_helm_content(obj, bundle, spec.helm)
        return
    own = bundle_content(spec)
    check_kustomize(obj, "spec.kustomize", own, merged=not spec.targets)
    for i, target in enumerate(spec.targets):
        path = f"spec.targets[{i}].kustomize"
        overrides = target_content(target, kind)
        if overrides is not None:
            check_kustomize(obj, path, overrides, merged=False)
        check_kustomize(obj, path, merge_content(kind, own, overrides or {}), merged=True)


def _check_helm_content(obj: str, bundle: Bundle, helm: HelmOptions) -> None:
    _validate_helm(obj, "spec.helm", helm)
    bundle_helm = helm.to_wire()
    _check_flux_options(obj, "spec.helm", bundle_helm)
    for i, target in enumerate(bundle.spec.targets):
        if target.helm is not None:
            _validate_helm(obj, f"spec.targets[{i}].helm", target.helm)
            merged = merge_helm(bundle_helm, target.helm.to_wire())
            _check_flux_options(obj, f"spec.targets[{i}].helm", merged)
        for name in ("repo", "chart"):
            own = getattr(target.helm, name, None) if target.helm else None
            if not own and not getattr(helm, name):
                raise InvalidInputError(
                    "is required (set it in spec.helm or in this target's helm)",
                    obj=obj,
                    field=f"spec.targets[{i}].helm.{name}",
                )


def _check_target_names(obj: str, bundle: Bundle) -> None:
    """Target names identify targets (explain, status): two targets may not share one."""
    first: dict[str, int] = {}
    for i, target in enumerate(bundle.spec.targets):
        if target.name is None:
            continue
        if target.name in first:
            other = f"spec.targets[{first[target.name]}]"
            raise InvalidInputError(
                f"target name {target.name!r} is already used by {other}",
                obj=obj,
                field=f"spec.targets[{i}].name",
            )
        first[target.name] = i


def _check_gates(obj: str, bundle: Bundle) -> None:
    """The schedule compiles, approval names manual partitions, health checks can be
    evaluated."""
    if bundle.spec.schedule is not None:
        compile_schedule(bundle.spec.schedule, obj=obj, field="spec.schedule")
    strategy = bundle.spec.rolloutStrategy
    approval = strategy.approval if strategy is not None else None
    if strategy is not None and approval is not None and approval.partitions is not None:
        known = [p.name for p in strategy.partitions]
        for i, name in enumerate(approval.partitions):
            if name not in known:
                listed = ", ".join(repr(k) for k in known)
                where = (
                    f"partitions: {listed}"
                    if known
                    else "there are none; leave approval.partitions out to approve every one"
                )
                raise InvalidInputError(
                    f"no partition {name!r} in spec.rolloutStrategy.partitions ({where})",
                    obj=obj,
                    field=f"spec.rolloutStrategy.approval.partitions[{i}]",
                )
    for i, target in enumerate(bundle.spec.targets):
        for j, check in enumerate(target.healthChecks):
            check_health_check(check, obj=obj, field=f"spec.targets[{i}].healthChecks[{j}]")


def _check_images(obj: str, bundle: Bundle) -> None:
    """Image names are what templates read (`images.NAME`): unique in the Bundle, and a target
    overrides only an image the Bundle has, at most once."""
    first: dict[str, int] = {}
    for i, image in enumerate(bundle.spec.images):
        if image.name in first:
            raise InvalidInputError(
                f"image name {image.name!r} is already used by spec.images[{first[image.name]}]",
                obj=obj,
                field=f"spec.images[{i}].name",
            )
        first[image.name] = i
    known = ", ".join(first) or "none"
    for i, target in enumerate(bundle.spec.targets):
        overridden: set[str] = set()
        for j, override in enumerate(target.images):
            field = f"spec.targets[{i}].images[{j}].name"
            if override.name not in first:
                raise InvalidInputError(
                    f"no image {override.name!r} in spec.images to override (images: {known})",
                    obj=obj,
                    field=field,
                )
            if override.name in overridden:
                raise InvalidInputError(
                    f"image {override.name!r} is overridden twice in this target",
                    obj=obj,
                    field=field,
                )
            overridden.add(override.name)
    _check_policies(obj, bundle)


def _check_policies(obj: str, bundle: Bundle) -> None:
    """Every policy, as written and as each target overrides it, can be used: a pattern that
    does not compile or a bad range is told here, before any registry is asked."""
    images = {image.name: image for image in bundle.spec.images}
    for i, image in enumerate(bundle.spec.images):
        _check_policy(obj, image, f"spec.images[{i}]")
    for i, target in enumerate(bundle.spec.targets):
        for j, override in enumerate(target.images):
            effective = effective_image(images[override.name], override)
            _check_policy(obj, effective, f"spec.targets[{i}].images[{j}]")


def _check_policy(obj: str, image: BundleImage, where: str) -> None:
    try:
        check_policy(image)
    except InvalidInputError as err:
        field = err.field or ""
        inner = field.removeprefix(image_field(image))
        raise InvalidInputError(err.message, obj=obj, field=where + inner) from None


def _selectors(bundle: Bundle) -> Iterator[tuple[str, LabelSelector]]:
    for i, target in enumerate(bundle.spec.targets):
        if target.clusterSelector is not None:
            yield f"spec.targets[{i}].clusterSelector", target.clusterSelector
        if target.clusterGroupSelector is not None:
            yield f"spec.targets[{i}].clusterGroupSelector", target.clusterGroupSelector
    strategy = bundle.spec.rolloutStrategy
    for i, part in enumerate(strategy.partitions if strategy else []):
        if part.clusterSelector is not None:
            yield f"spec.rolloutStrategy.partitions[{i}].clusterSelector", part.clusterSelector
        if part.clusterGroupSelector is not None:
            yield (
                f"spec.rolloutStrategy.partitions[{i}].clusterGroupSelector",
                part.clusterGroupSelector,
            )
    for i, dep in enumerate(bundle.spec.dependsOn):
        if dep.selector is not None:
            yield f"spec.dependsOn[{i}].selector", dep.selector


def _references(bundle: Bundle) -> Iterator[tuple[str, str]]:
    """The names of other objects a Bundle refers to, with their paths."""
    strategy = bundle.spec.rolloutStrategy
    pickers = [(f"spec.targets[{i}]", t) for i, t in enumerate(bundle.spec.targets)] + [
        (f"spec.rolloutStrategy.partitions[{i}]", p)
        for i, p in enumerate(strategy.partitions if strategy else [])
    ]
    for path, picker in pickers:
        if picker.clusterName is not None:
            yield f"{path}.clusterName", picker.clusterName
        if picker.clusterGroup is not None:
            yield f"{path}.clusterGroup", picker.clusterGroup
    for i, dep in enumerate(bundle.spec.dependsOn):
        if dep.name is not None:
            yield f"spec.dependsOn[{i}].name", dep.name


def _validate_helm(obj: str, path: str, helm: HelmOptions) -> None:
    if helm.repo is not None:
        _check_repo(obj, f"{path}.repo", helm.repo)
        if helm.insecure and not helm.repo.startswith("oci://"):
            raise InvalidInputError(
                "applies to oci:// registries only (an http:// repository is plain HTTP already)",
                obj=obj,
                field=f"{path}.insecure",
            )
    if helm.secretRef is not None and helm.secretRef.name == AGENT_TOKEN_SECRET:
        raise InvalidInputError(
            f"{AGENT_TOKEN_SECRET!r} is the agent's token Secret in every cluster namespace; "
            "name the credentials Secret differently",
            obj=obj,
            field=f"{path}.secretRef.name",
        )
    chart = helm.chart
    if chart is not None and (not _CHART_NAME_RE.fullmatch(chart) or chart in (".", "..")):
        raise InvalidInputError(
            f"{chart!r} is not a chart name (letters, digits, '.', '_' and '-')",
            obj=obj,
            field=f"{path}.chart",
        )
    if helm.version is not None and not is_exact_version(helm.version):
        try:
            parse_constraint(helm.version)
        except InvalidInputError as err:
            raise InvalidInputError(err.message, obj=obj, field=f"{path}.version") from None
    name = helm.releaseName
    if name is not None and not is_helm_release_name(name):
        raise InvalidInputError(
            f"{name!r} is not {_RELEASE_NAME_RULE}", obj=obj, field=f"{path}.releaseName"
        )


def _check_flux_options(obj: str, path: str, helm: dict[str, Any]) -> None:
    """What Flux's own rules refuse in `helm` (wire JSON; for a target, merged over spec.helm),
    and templated patches that are not YAML."""
    try:
        check_release_options(helm)
    except UnsupportedOptionError as err:
        raise InvalidInputError(str(err), obj=obj, field=f"{path}.{err.field}") from None
    repo, chart = helm.get("repo"), helm.get("chart")
    if repo and chart:
        try:
            check_source_options(source_for(repo, chart, helm), helm)
        except RepoError:
            pass  # told by _check_repo, with the repository's own field
        except SourceOptionError as err:
            raise InvalidInputError(str(err), obj=obj, field=f"{path}.{err.field}") from None
    if not helm.get("disableTemplating"):
        for i, j in templated_patches(helm.get("postRenderers") or []):
            patch = helm["postRenderers"][i]["kustomize"]["patches"][j]["patch"]
            field = f"{path}.postRenderers[{i}].kustomize.patches[{j}].patch"
            read_patch(patch, obj=obj, field=field)


def _check_repo(obj: str, path: str, repo: str) -> None:
    if not repo.startswith(REPO_SCHEMES):
        raise InvalidInputError(
            f"{repo!r} is not a Helm repository: use https://, http:// or oci://",
            obj=obj,
            field=path,
        )
    try:
        parts = urlsplit(repo)
        parts.port  # noqa: B018  # urlsplit checks the port only when asked for it
    except ValueError as err:
        raise InvalidInputError(
            f"{repo!r} is not a valid URL: {err}", obj=obj, field=path
        ) from None
    if not parts.hostname or any(c.isspace() for c in repo):
        raise InvalidInputError(f"{repo!r} does not name a host", obj=obj, field=path)


def _check_object_name(obj: str, path: str, name: str) -> None:
    if not is_dns1123_subdomain(name):
        problem = "must not be empty" if not name else f"{name!r} is not {_OBJECT_NAME_RULE}"
        raise InvalidInputError(problem, obj=obj, field=path)


def _check_namespace(obj: str, path: str, namespace: str) -> None:
    if not is_dns1123_label(namespace):
        raise InvalidInputError(
            f"{namespace!r} is not a valid namespace name (DNS-1123 label)", obj=obj, field=path
        )
