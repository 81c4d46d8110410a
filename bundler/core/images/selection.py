"""The image a target resolves: the Bundle's `spec.images[]` entry with the target's override
(`targets[].images[]`, same `name`) laid over it."""

from __future__ import annotations

from bundler.api.images import BundleImage, ImageSelection, TargetImage


def effective_image(image: BundleImage, override: TargetImage | None) -> BundleImage:
    """`image` with every selection field the override sets (policy, filterTags, ignoreTags,
    platform) replacing the Bundle's; the repository and credentials stay the Bundle's."""
    if override is None:
        return image
    changes = {
        name: value
        for name in ImageSelection.model_fields
        if (value := getattr(override, name)) is not None
    }
    return image.model_copy(update=changes)
