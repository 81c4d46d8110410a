"""Generated clusters for `bundler sim --clusters N`: varied labels and values, from a seed.

Labels are drawn so that the usual selectors find something: `env` (dev, staging, prod; prod the
rarest), `region` (eu-west, us-east, ap-south) and a `tier` value for templates. The same seed
always gives the same clusters.
"""

from __future__ import annotations

import random
from collections import Counter

from bundler.api.cluster import Cluster, ClusterSpec
from bundler.api.meta import ObjectMeta
from bundler.inputs import World

ENVIRONMENTS = ("dev", "dev", "staging", "staging", "prod")
REGIONS = ("eu-west", "us-east", "ap-south")
TIERS = ("bronze", "silver", "gold")
DEFAULT_WORKSPACE = "fleet-default"


def busiest_workspace(world: World) -> str:
    """Where generated clusters go: the workspace with the most Bundles (first by name on a tie)."""
    counts = Counter(b.metadata.namespace or DEFAULT_WORKSPACE for b in world.bundles)
    if not counts:
        return DEFAULT_WORKSPACE
    return min(counts, key=lambda ws: (-counts[ws], ws))


def generated_clusters(count: int, workspace: str, seed: int) -> list[Cluster]:
    """`count` clusters named `sim-0001`... in `workspace`."""
    draw = random.Random(seed)
    width = max(4, len(str(count)))
    clusters = []
    for index in range(count):
        labels = {
            "env": draw.choice(ENVIRONMENTS),
            "region": draw.choice(REGIONS),
            "bundler.dev/simulated": "true",
        }
        meta = ObjectMeta(
            name=f"sim-{index + 1:0{width}d}",
            namespace=workspace,
            labels=labels,
        )
        spec = ClusterSpec(values={"tier": draw.choice(TIERS)})
        clusters.append(Cluster(metadata=meta, spec=spec))
    return clusters
