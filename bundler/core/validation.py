"""Semantic checks on a Bundle beyond its schema: selectors, repository schemes, names, versions.

Every failure is an InvalidInputError that names the bundle and the field path, so the CLI can point
at the document and a controller can put the message on the Bundle's Ready condition.
"""

from __future__ import annotations

from collections.abc import Iterator

from bundler.api.bundle import Bundle
from bundler.api.helm import HelmOptions
from bundler.api.selector import LabelSelector
from bundler.core.naming import is_dns1123_label
from bundler.core.selectors import validate_selector
from bundler.core.versions import is_exact_version, parse_constraint
from bundler.errors import InvalidInputError

REPO_SCHEMES = ("https://", "http://", "oci://")
MAX_RELEASE_NAME = 53


def bundle_ref(bundle: Bundle) -> str:
    return f"Bundle {bundle.metadata.namespace}/{bundle.metadata.name}"


def validate_bundle(bundle: Bundle) -> None:
    obj = bundle_ref(bundle)
    for path, selector in _selectors(bundle):
        try:
            validate_selector(selector, field=path)
        except InvalidInputError as err:
            raise InvalidInputError(err.message, obj=obj, field=err.field or path) from None
    _validate_helm(obj, "spec.helm", bundle.spec.helm)
    for i, target in enumerate(bundle.spec.targets):
        if target.helm is not None:
            _validate_helm(obj, f"spec.targets[{i}].helm", target.helm)
        for name in ("repo", "chart"):
            own = getattr(target.helm, name, None) if target.helm else None
            if not own and not getattr(bundle.spec.helm, name):
                raise InvalidInputError(
                    "is required (set it in spec.helm or in this target's helm)",
                    obj=obj,
                    field=f"spec.targets[{i}].helm.{name}",
                )
        if target.namespace is not None:
            _check_namespace(obj, f"spec.targets[{i}].namespace", target.namespace)
    if bundle.spec.namespace is not None:
        _check_namespace(obj, "spec.namespace", bundle.spec.namespace)
    for i, dep in enumerate(bundle.spec.dependsOn):
        if dep.name == bundle.metadata.name:
            raise InvalidInputError(
                "a bundle cannot depend on itself", obj=obj, field=f"spec.dependsOn[{i}].name"
            )


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


def _validate_helm(obj: str, path: str, helm: HelmOptions) -> None:
    if helm.repo is not None and not helm.repo.startswith(REPO_SCHEMES):
        raise InvalidInputError(
            f"{helm.repo!r} is not a Helm repository: use https://, http:// or oci://",
            obj=obj,
            field=f"{path}.repo",
        )
    if helm.version is not None and not is_exact_version(helm.version):
        try:
            parse_constraint(helm.version)
        except InvalidInputError as err:
            raise InvalidInputError(err.message, obj=obj, field=f"{path}.version") from None
    name = helm.releaseName
    if name is not None and (len(name) > MAX_RELEASE_NAME or not is_dns1123_label(name)):
        raise InvalidInputError(
            f"{name!r} is not a valid Helm release name (lowercase letters, digits and '-', "
            f"at most {MAX_RELEASE_NAME} characters)",
            obj=obj,
            field=f"{path}.releaseName",
        )


def _check_namespace(obj: str, path: str, namespace: str) -> None:
    if not is_dns1123_label(namespace):
        raise InvalidInputError(
            f"{namespace!r} is not a valid namespace name (DNS-1123 label)", obj=obj, field=path
        )
