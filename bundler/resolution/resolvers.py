"""The resolvers planning asks about version ranges and image policies, as the callers plug them in.

The manager takes them in its options (bundler.manager.options), the offline commands build them
from their flags (bundler.commands.arguments); bundler.resolution.chart_resolver and
bundler.oci.images are the real ones, tests pass functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from bundler.api.images import BundleImage, ResolvedImage

# (repository, chart, version constraint, repository credentials Secret data or None) -> version.
# Raise InvalidInputError when the range can never resolve as written, TransientError otherwise.
VersionResolver = Callable[[str, str, str, Mapping[str, str] | None], str]

# (a Bundle image with its target's override applied, its secretRef Secret data or None) -> the
# tag and digest it resolves to (bundler.oci.images.ImageResolver.resolve). Raise InvalidInputError
# when only a change by someone can help (credentials refused, no tag matches), else TransientError.
ImageResolverFn = Callable[[BundleImage, Mapping[str, str] | None], ResolvedImage]
