"""Injected release failures for the simulated Flux: by chart version, by cluster label, or at a
seeded rate.

Every decision is a pure function of the policy and the release (cluster, release, chart version),
so a run is reproducible whatever order the releases are reconciled in, and retrying the same chart
version on the same cluster fails again, as a genuinely broken chart would.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from bundler.errors import InvalidInputError


@dataclass(frozen=True)
class ReleaseIdentity:
    """What a failure decision looks at."""

    cluster: str
    cluster_labels: Mapping[str, str]
    release: str
    chart_version: str


@dataclass(frozen=True)
class FailurePolicy:
    """`versions`: chart versions that fail everywhere; `labels`: clusters carrying all of
    these labels fail every release; `rate`: the fraction of other releases that fail, drawn
    from `seed`."""

    versions: frozenset[str] = frozenset()
    labels: Mapping[str, str] = field(default_factory=dict)
    rate: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise InvalidInputError(f"must be between 0 and 1, got {self.rate}", field="fail rate")

    def failure(self, release: ReleaseIdentity) -> str | None:
        """Why this release fails (a message naming the injection), or None when it succeeds."""
        if release.chart_version in self.versions:
            return f"simulated failure: chart version {release.chart_version} is set to fail"
        if self.labels and all(release.cluster_labels.get(k) == v for k, v in self.labels.items()):
            wanted = ",".join(f"{k}={v}" for k, v in sorted(self.labels.items()))
            return f"simulated failure: clusters labelled {wanted} are set to fail"
        if self.rate > 0 and self._draw(release) < self.rate:
            return f"simulated failure: drawn at rate {self.rate:g} (seed {self.seed})"
        return None

    def _draw(self, release: ReleaseIdentity) -> float:
        text = f"{self.seed}/{release.cluster}/{release.release}/{release.chart_version}"
        digest = hashlib.sha256(text.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") / 2.0**64


def parse_label(text: str) -> tuple[str, str]:
    """`KEY=VALUE` for --fail-label."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise InvalidInputError(f"{text!r} is not KEY=VALUE", field="--fail-label")
    return key, value
