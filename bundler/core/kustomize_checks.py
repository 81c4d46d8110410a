"""Semantic checks of a Bundle's `spec.kustomize` and its targets' overrides, beyond the schema:
one source of one kind with a usable URL, one Git reference, an artifact tag or version, names
and namespaces Kubernetes accepts, templated patches that are YAML. Pure.

Each failure is an InvalidInputError naming the Bundle and the field path (the merged result of a
target is checked at the target's path, since that is where a fix goes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from bundler.core.agent.identity import AGENT_TOKEN_SECRET
from bundler.core.naming import is_dns1123_label, is_dns1123_subdomain
from bundler.core.templating.fields import TEMPLATE_MARK, read_patch
from bundler.core.versions import is_exact_version, parse_constraint
from bundler.errors import InvalidInputError

OCI_SCHEME = "oci://"
GIT_SCHEMES = ("https://", "http://", "ssh://")
GIT_REF_FIELDS = ("branch", "tag", "semver", "commit")


def check_kustomize(obj: str, path: str, kustomize: Mapping[str, Any], *, merged: bool) -> None:
    """`kustomize` (wire JSON) at `path` of the Bundle `obj`; `merged`: the Bundle's own fields
    with a target's laid over (a source is then required)."""
    source = kustomize.get("source")
    if source is None:
        if merged:
            raise InvalidInputError(
                "is required: give source.oci (an OCI artifact) or source.git (a Git "
                "repository), in spec.kustomize or in this target's kustomize",
                obj=obj,
                field=f"{path}.source",
            )
    else:
        _check_source(obj, f"{path}.source", source, merged=merged)
    namespace = kustomize.get("targetNamespace")
    if namespace is not None and not is_dns1123_label(namespace):
        raise InvalidInputError(
            f"{namespace!r} is not a valid namespace name (DNS-1123 label)",
            obj=obj,
            field=f"{path}.targetNamespace",
        )
    paths = [("path", kustomize.get("path"))]
    paths += [(f"components[{i}]", c) for i, c in enumerate(kustomize.get("components") or [])]
    for name, value in paths:
        if isinstance(value, str) and ".." in value.replace("\\", "/").split("/"):
            raise InvalidInputError(
                f"{value!r} leaves the source: give a path inside it, without '..'",
                obj=obj,
                field=f"{path}.{name}",
            )
    if not kustomize.get("disableTemplating"):
        for i, patch in enumerate(kustomize.get("patches") or []):
            text = patch.get("patch")
            if isinstance(text, str) and TEMPLATE_MARK in text:
                read_patch(text, obj=obj, field=f"{path}.patches[{i}].patch")


def _check_source(obj: str, path: str, source: Mapping[str, Any], *, merged: bool) -> None:
    kinds = [kind for kind in ("oci", "git") if source.get(kind) is not None]
    if len(kinds) > 1:
        raise InvalidInputError("give one of oci and git, not both", obj=obj, field=path)
    if not kinds:
        if merged:
            raise InvalidInputError(
                "give oci (an OCI artifact) or git (a Git repository)", obj=obj, field=path
            )
        return
    kind = kinds[0]
    found = source[kind]
    where = f"{path}.{kind}"
    url = found.get("url")
    if url is None:
        if merged:
            raise InvalidInputError("is required", obj=obj, field=f"{where}.url")
    else:
        _check_url(obj, f"{where}.url", url, kind)
    secret = (found.get("secretRef") or {}).get("name")
    if secret is not None:
        _check_secret(obj, f"{where}.secretRef.name", secret)
    if kind == "oci":
        _check_artifact_version(obj, where, found)
    else:
        ref = found.get("ref") or {}
        given = [name for name in GIT_REF_FIELDS if ref.get(name)]
        if len(given) > 1:
            raise InvalidInputError(
                f"give one of {', '.join(GIT_REF_FIELDS)} (got {', '.join(given)})",
                obj=obj,
                field=f"{where}.ref",
            )
        semver = ref.get("semver")
        if semver:
            _check_range(obj, f"{where}.ref.semver", semver)


def _check_url(obj: str, path: str, url: str, kind: str) -> None:
    schemes = (OCI_SCHEME,) if kind == "oci" else GIT_SCHEMES
    if not url.startswith(schemes):
        raise InvalidInputError(
            f"{url!r} does not start with {' or '.join(schemes)}", obj=obj, field=path
        )
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # urlsplit checks the port only when asked for it
    except ValueError as err:
        raise InvalidInputError(f"{url!r} is not a valid URL: {err}", obj=obj, field=path) from None
    if not parts.hostname or any(c.isspace() for c in url):
        raise InvalidInputError(f"{url!r} does not name a host", obj=obj, field=path)
    if kind == "oci" and (":" in parts.path or "@" in parts.path):
        raise InvalidInputError(
            f"{url!r} names a tag or digest: give the repository only, and the tag in tag or "
            "version",
            obj=obj,
            field=path,
        )


def _check_artifact_version(obj: str, where: str, oci: Mapping[str, Any]) -> None:
    tag, version = oci.get("tag"), oci.get("version")
    if tag is not None and version is not None:
        raise InvalidInputError(
            "give one of tag (exact) and version (exact or a range), not both",
            obj=obj,
            field=f"{where}.version",
        )
    if version is not None:
        _check_range(obj, f"{where}.version", version)


def _check_range(obj: str, path: str, version: str) -> None:
    if not is_exact_version(version):
        try:
            parse_constraint(version)
        except InvalidInputError as err:
            raise InvalidInputError(err.message, obj=obj, field=path) from None


def _check_secret(obj: str, path: str, name: str) -> None:
    if name == AGENT_TOKEN_SECRET:
        raise InvalidInputError(
            f"{AGENT_TOKEN_SECRET!r} is the agent's token Secret in every cluster namespace; "
            "name the credentials Secret differently",
            obj=obj,
            field=path,
        )
    if not is_dns1123_subdomain(name):
        raise InvalidInputError(
            f"{name!r} is not a valid Secret name (DNS-1123 subdomain)", obj=obj, field=path
        )
