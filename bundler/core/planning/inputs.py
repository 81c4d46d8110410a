"""What the render step of planning takes besides a Bundle and its decisions: what the pass
resolved outside the Bundle (bundler.core.planning.bundle_pass asks resolvers for it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bundler.api.dependencies import DependsOn
from bundler.core.images.wanted import ResolvedImages

# (repo, chart, version constraint) -> the concrete version the manager resolved it to.
ResolvedVersions = Mapping[tuple[str, str, str], str]
# A Bundle's dependsOn resolved into names (bundler.core.dependencies.resolve_dependencies).
Dependencies = Sequence[DependsOn]
# The digest of each management values object a Bundle names (valuesFrom, source: Management), by
# (kind, name), as the manager read it (bundler.core.flux.values_copies); an object without one
# is an optional one that does not exist.
Delivered = Mapping[tuple[str, str], str]


@dataclass(frozen=True)
class PassInputs:
    """`resolved`: a concrete version per range (empty: ranges left as written, offline);
    `images`: an answer per image (None: offline, each shows its policy in place of a tag);
    `dependencies`: dependsOn resolved (None: by name alone); `delivered`: the digests of the
    management values objects."""

    resolved: ResolvedVersions = field(default_factory=dict)
    images: ResolvedImages | None = None
    dependencies: Dependencies | None = None
    delivered: Delivered = field(default_factory=dict)
