"""The fleet shapes `make bench` measures every row on.

- ``bench``: generated clusters, every Bundle reading one label (clusters sharing it share the
  render): the shape the first scale round was measured on.
- ``realistic``: bundler.sim.realistic's clusters, groups and Bundles (per-cluster hosts and IDs,
  overrides by environment and group, lists turned into maps, conditionals, static values).
- ``heavy``: the realistic clusters with Bundles of large values (about 20 KB of static values
  and 60 templated strings reading the cluster's name, labels, annotations and values).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from bundler.api.bundle import Bundle
from bundler.inputs import World
from bundler.sim.bench import every_cluster_bundle
from bundler.sim.generated import DEFAULT_WORKSPACE, generated_clusters
from bundler.sim.realistic import realistic_bundles, realistic_clusters, realistic_groups


class Shape(StrEnum):
    BENCH = "bench"
    REALISTIC = "realistic"
    HEAVY = "heavy"


def scale_bundle(name: str) -> Bundle:
    """A Bundle on every cluster whose values read one label: a typical templated Bundle."""
    return every_cluster_bundle(name, {"replicas": 1, "region": "${ cluster.labels.region }"})


def heavy_bundle(name: str) -> Bundle:
    """A Bundle on every cluster with large values, many of them templated per cluster."""
    values: dict[str, Any] = {
        f"component{i}": {
            "enabled": i % 3 != 0,
            "image": {"repository": f"registry.example.com/team/component-{i}", "tag": "1.2.3"},
            "resources": {"requests": {"cpu": f"{i * 10}m", "memory": f"{i * 16}Mi"}},
            "description": f"component {i} " + "lorem ipsum dolor sit amet " * 12,
        }
        for i in range(40)
    }
    for i in range(20):
        component = values[f"component{i}"]
        component["host"] = "${ cluster.name }-c" + f"{i}.${{ cluster.labels.region }}"
        component["zone"] = "${ cluster.labels.zone }"
        component["owner"] = "${ cluster.annotations.owner }"
    values["clusterId"] = "${ cluster.values.clusterId }"
    values["cidrs"] = "${ cluster.values.cidrs | join(',') }"
    return every_cluster_bundle(name, values)


def shape_world(shape: Shape, clusters: int, bundles: int) -> World:
    """The clusters, groups and Bundles of `shape` (the same each time: seeded)."""
    if shape is Shape.BENCH:
        return World(
            clusters=generated_clusters(clusters, DEFAULT_WORKSPACE, seed=1),
            bundles=[scale_bundle(f"scale-{i + 1}") for i in range(bundles)],
        )
    fleet = realistic_clusters(clusters)
    if shape is Shape.REALISTIC:
        return World(clusters=fleet, groups=realistic_groups(), bundles=realistic_bundles(bundles))
    return World(clusters=fleet, bundles=[heavy_bundle(f"heavy-{i + 1}") for i in range(bundles)])
