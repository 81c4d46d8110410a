"""Templates beyond values: post-renderers and common metadata of a release, and a Kustomize
Bundle's substitutions and patches.

`helm.postRenderers` and `helm.commonMetadata` are templated per cluster like values. Label and
annotation values of commonMetadata are text: a template rendering a number or a boolean gives
its text, anything else is the cluster's template error. So are `kustomize.postBuild.substitute`
values (Flux substitutes text) and `kustomize.patches`, whose patches are read as below.

A patch (`helm.postRenderers[].kustomize.patches[].patch`) is YAML text that Kustomize parses
after Helm renders: substituting a template's result into that text would let a cluster's values
or annotations write YAML structure into the patch.
So a patch holding `${` is read as YAML first, and its strings are rendered like those of values
(native types kept, keys too, `$${` for a literal `${`); the rendered tree is written back as YAML
text. A patch without `${` is passed as it is written.

:func:`templated_tree` gives the tree one cluster's render walks (`values`, `postRenderers` with
the templated patches read, `commonMetadata`; for Kustomize `postBuild` and `patches`) and where
the patches were read; :func:`rendered_options` writes the render back into the options.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bundler.errors import InvalidInputError, TemplateError
from bundler.yamldump import dump
from bundler.yamlload import load

TEMPLATE_MARK = "${"
VALUES = "values"
POST_RENDERERS = "postRenderers"
COMMON_METADATA = "commonMetadata"
POST_BUILD = "postBuild"
PATCHES = "patches"
#: The fields of the options a cluster's render walks (`helm`'s, then `kustomize`'s).
TEMPLATED_FIELDS = (VALUES, POST_RENDERERS, COMMON_METADATA, POST_BUILD, PATCHES)

#: (post-renderer index, patch index) of a patch read as YAML; (OWN_PATCHES, index) for one of a
#: Kustomization's own `patches`.
PatchAt = tuple[int, int]
OWN_PATCHES = -1


@dataclass(frozen=True)
class TemplatedTree:
    """What one cluster's render walks, and which patches in it were read from YAML text."""

    tree: dict[str, Any]
    patches: tuple[PatchAt, ...]


def patch_field(renderer: int, patch: int) -> str:
    return f"{POST_RENDERERS}[{renderer}].kustomize.patches[{patch}].patch"


def templated_patches(post_renderers: Sequence[Any]) -> list[PatchAt]:
    """Where the patches holding a template are."""
    found: list[PatchAt] = []
    for i, renderer in enumerate(post_renderers):
        kustomize = renderer.get("kustomize") if isinstance(renderer, Mapping) else None
        patches = kustomize.get("patches") if isinstance(kustomize, Mapping) else None
        found.extend((i, j) for j in _templated(patches or []))
    return found


def _templated(patches: Sequence[Any]) -> list[int]:
    """The indexes of the patches whose text holds a template."""
    found = []
    for j, patch in enumerate(patches):
        text = patch.get("patch") if isinstance(patch, Mapping) else None
        if isinstance(text, str) and TEMPLATE_MARK in text:
            found.append(j)
    return found


def _patch_list(tree: Mapping[str, Any], renderer: int) -> Any:
    """The list of patches `renderer` (a post-renderer's index, or OWN_PATCHES) holds."""
    if renderer == OWN_PATCHES:
        return tree[PATCHES]
    return tree[POST_RENDERERS][renderer]["kustomize"]["patches"]


def read_patch(text: str, *, obj: str | None, field: str) -> Any:
    """A templated patch's YAML; InvalidInputError naming `obj` and `field` when it is not one
    YAML document."""
    try:
        return load(text, field)
    except InvalidInputError as err:
        raise InvalidInputError(
            f"a patch holding `${{ }}` is read as YAML before it is templated: {err.message} "
            '(in flow style ({...}, [...]) quote a template: "${ ... }")',
            obj=obj,
            field=field,
        ) from None


def templated_tree(helm: Mapping[str, Any], *, obj: str | None = None) -> TemplatedTree:
    """The templated fields of `helm` (wire JSON) as one tree to render, templated patches read
    as YAML. InvalidInputError (naming `obj`) when such a patch is not YAML."""
    names = (VALUES, COMMON_METADATA, POST_BUILD)
    tree: dict[str, Any] = {name: helm[name] for name in names if name in helm}
    at: list[PatchAt] = []
    post_renderers = helm.get(POST_RENDERERS)
    if isinstance(post_renderers, list):
        at = templated_patches(post_renderers)
        tree[POST_RENDERERS] = copy.deepcopy(post_renderers) if at else post_renderers
    own = helm.get(PATCHES)
    if isinstance(own, list):
        found = [(OWN_PATCHES, j) for j in _templated(own)]
        tree[PATCHES] = copy.deepcopy(own) if found else own
        at += found
    for i, j in at:
        patch = _patch_list(tree, i)[j]
        field = f"{PATCHES}[{j}].patch" if i == OWN_PATCHES else patch_field(i, j)
        patch["patch"] = read_patch(patch["patch"], obj=obj, field=field)
    return TemplatedTree(tree, tuple(at))


def rendered_options(
    helm: Mapping[str, Any],
    rendered: Mapping[str, Any],
    patches: Sequence[PatchAt],
    *,
    obj: str | None = None,
) -> dict[str, Any]:
    """`helm` with its templated fields rendered, the read patches written as YAML text again;
    TemplateError (naming `obj`) for a label or annotation that rendered to a list or a map."""
    out = dict(helm)
    if VALUES in rendered:
        out[VALUES] = rendered[VALUES]
    if COMMON_METADATA in rendered:
        out[COMMON_METADATA] = _metadata_text(rendered[COMMON_METADATA], obj)
    if POST_BUILD in rendered:
        out[POST_BUILD] = _post_build_text(rendered[POST_BUILD], obj)
    for name in (POST_RENDERERS, PATCHES):
        if name in rendered:
            out[name] = rendered[name]
    for i, j in patches:
        patch = _patch_list(out, i)[j]
        patch["patch"] = dump(patch["patch"])
    return out


def _post_build_text(post_build: Any, obj: str | None) -> Any:
    """`postBuild` with each substitute value as text (Flux substitutes strings)."""
    if not isinstance(post_build, Mapping) or not isinstance(post_build.get("substitute"), Mapping):
        return post_build
    substitute = {
        key: _text(value, obj, f"{POST_BUILD}.substitute[{key!r}]", "substitutions")
        for key, value in post_build["substitute"].items()
    }
    return {**post_build, "substitute": substitute}


def _text(value: Any, obj: str | None, field: str, what: str) -> str:
    """A rendered value as text: a number or a boolean gives its text, anything else is the
    cluster's template error."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    raise TemplateError(f"renders to {type(value).__name__}; {what} are text", obj=obj, field=field)


def _metadata_text(metadata: Mapping[str, Any], obj: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field, entries in metadata.items():
        if not isinstance(entries, Mapping):
            out[field] = entries
            continue
        out[field] = {
            key: _text(value, obj, f"{COMMON_METADATA}.{field}[{key!r}]", "labels and annotations")
            for key, value in entries.items()
        }
    return out
