"""Templates beyond values: post-renderers and common metadata of a release.

`helm.postRenderers` and `helm.commonMetadata` are templated per cluster like values. Label and
annotation values of commonMetadata are text: a template rendering a number or a boolean gives
its text, anything else is the cluster's template error.

A patch (`helm.postRenderers[].kustomize.patches[].patch`) is YAML text that Kustomize parses
after Helm renders: substituting a template's result into that text would let a cluster's values
or annotations write YAML structure into the patch.
So a patch holding `${` is read as YAML first, and its strings are rendered like those of values
(native types kept, keys too, `$${` for a literal `${`); the rendered tree is written back as YAML
text. A patch without `${` is passed as it is written.

:func:`templated_tree` gives the tree one cluster's render walks (`values`, `postRenderers` with
the templated patches read, `commonMetadata`) and where the patches were read;
:func:`rendered_options` writes the render back into `helm`.
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
#: The fields of `helm` a cluster's render walks.
TEMPLATED_FIELDS = (VALUES, POST_RENDERERS, COMMON_METADATA)

#: (post-renderer index, patch index) of a patch read as YAML.
PatchAt = tuple[int, int]


@dataclass(frozen=True)
class TemplatedTree:
    """What one cluster's render walks, and which patches in it were read from YAML text."""

    tree: dict[str, Any]
    patches: tuple[PatchAt, ...]


def patch_field(renderer: int, patch: int) -> str:
    return f"{POST_RENDERERS}[{renderer}].kustomize.patches[{patch}].patch"


def templated_patches(post_renderers: Sequence[Any]) -> list[PatchAt]:
    """Where the patches holding a template are."""
    found = []
    for i, renderer in enumerate(post_renderers):
        kustomize = renderer.get("kustomize") if isinstance(renderer, Mapping) else None
        patches = kustomize.get("patches") if isinstance(kustomize, Mapping) else None
        for j, patch in enumerate(patches or []):
            text = patch.get("patch") if isinstance(patch, Mapping) else None
            if isinstance(text, str) and TEMPLATE_MARK in text:
                found.append((i, j))
    return found


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
    tree: dict[str, Any] = {name: helm[name] for name in (VALUES, COMMON_METADATA) if name in helm}
    post_renderers = helm.get(POST_RENDERERS)
    at: list[PatchAt] = []
    if isinstance(post_renderers, list):
        at = templated_patches(post_renderers)
        if at:
            post_renderers = copy.deepcopy(post_renderers)
            for i, j in at:
                patch = post_renderers[i]["kustomize"]["patches"][j]
                patch["patch"] = read_patch(patch["patch"], obj=obj, field=patch_field(i, j))
        tree[POST_RENDERERS] = post_renderers
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
    if POST_RENDERERS in rendered:
        post_renderers = rendered[POST_RENDERERS]
        for i, j in patches:
            patch = post_renderers[i]["kustomize"]["patches"][j]
            patch["patch"] = dump(patch["patch"])
        out[POST_RENDERERS] = post_renderers
    return out


def _metadata_text(metadata: Mapping[str, Any], obj: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field, entries in metadata.items():
        if not isinstance(entries, Mapping):
            out[field] = entries
            continue
        out[field] = {}
        for key, value in entries.items():
            if isinstance(value, bool):
                text = "true" if value else "false"
            elif isinstance(value, int | float | str):
                text = str(value)
            else:
                raise TemplateError(
                    f"renders to {type(value).__name__}; labels and annotations are text",
                    obj=obj,
                    field=f"{COMMON_METADATA}.{field}[{key!r}]",
                )
            out[field][key] = text
    return out
