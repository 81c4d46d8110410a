"""What one Bundle's rendered fields may hold across all its clusters.

One cluster's render is bounded (1 MiB of output, the template worker's memory and time), but a
Bundle whose templates read the cluster's name renders once per cluster, and the manager keeps each
cluster's options until the next change: 1 MiB for each of 1,000 clusters would be a gigabyte held
for one tenant's Bundle. :class:`HeldBytes` is the Bundle's allowance: each render not shared with
another cluster is charged its size, and a render past the allowance becomes that cluster's
:class:`~bundler.errors.TemplateLimitExceeded` (the cluster keeps what it runs), so what a Bundle
holds is bounded whatever its templates do.

Sizes are the compact JSON of the rendered tree: what the BundleDeployment will carry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bundler.errors import TemplateLimitExceeded

#: The default allowance of one Bundle: far beyond a fleet of 5,000 clusters with a few KiB of
#: values each, well within the manager chart's memory limit.
DEFAULT_BUNDLE_HELD_MIB = 64
DEFAULT_BUNDLE_HELD_BYTES = DEFAULT_BUNDLE_HELD_MIB << 20

#: The ``limit`` a TemplateLimitExceeded of this bound carries.
HELD_LIMIT = "bundle"


def rendered_bytes(rendered: Mapping[str, Any]) -> int:
    """The size of one cluster's rendered fields: their compact JSON (non-JSON leaves as text)."""
    return len(json.dumps(rendered, separators=(",", ":"), default=str))


class HeldBytes:
    """A Bundle's allowance for the renders of one planning pass, and what each cluster was
    charged (by its index in the pass: 0 when it shares another cluster's render)."""

    def __init__(self, limit_bytes: int, held: int = 0) -> None:
        """``held``: what the Bundle's clusters that are not rendered again already hold."""
        self.limit_bytes = limit_bytes
        self.held = held
        self.charged: dict[int, int] = {}

    def charge(self, index: int, size: int, obj: str) -> TemplateLimitExceeded | None:
        """Charge cluster ``index``'s render of ``size`` bytes; the error when it does not fit."""
        if self.held + size > self.limit_bytes:
            return TemplateLimitExceeded(
                f"rendered values of {size} bytes would take what this Bundle's clusters hold past"
                f" the --template-bundle-memory limit of {self.limit_bytes >> 20} MiB; not"
                " rendered for this cluster (it keeps what it runs)",
                limit=HELD_LIMIT,
                obj=obj,
                field="spec.helm.values",
            )
        self.held += size
        self.charged[index] = size
        return None
