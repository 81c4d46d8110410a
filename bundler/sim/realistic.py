"""A realistic fleet for measuring planning: varied templates, overrides, groups, per-cluster text.

The scale bench's Bundles all read one label, so a thousand clusters render three times. Real
fleets are less kind: hosts and IDs written per cluster (one render per cluster, nothing shared),
overrides per environment, groups, lists turned into maps, conditionals, a few KB of static values
around a few templates. `realistic_world` builds such a fleet from a seed (the same seed, the same
fleet); the kinds of Bundle are described in `BUNDLE_KINDS`.
"""

from __future__ import annotations

import random
from typing import Any

from bundler.api.bundle import Bundle
from bundler.api.cluster import Cluster, ClusterGroup, ClusterGroupSpec, ClusterSpec
from bundler.api.meta import ObjectMeta
from bundler.api.selector import LabelSelector
from bundler.sim.generated import DEFAULT_WORKSPACE, ENVIRONMENTS, REGIONS, TIERS

CLASSES = ("nginx", "traefik", None)

#: What each kind of Bundle templates (the Bundles cycle through them).
BUNDLE_KINDS = {
    "region": "one label: clusters that share it share the render",
    "hosts": "per-cluster hosts and IDs, a default over a missing key, AllMatches overrides",
    "network": "a list of CIDRs turned into maps, a conditional, an override by group",
    "static": "3 KB of static values around an expression building a map and an annotation",
}


def realistic_clusters(count: int, seed: int = 1) -> list[Cluster]:
    """`count` clusters with labels, annotations and values of several shapes."""
    draw = random.Random(seed)
    clusters = []
    for index in range(count):
        region = draw.choice(REGIONS)
        meta = ObjectMeta(
            name=f"edge-{index + 1:05d}",
            namespace=DEFAULT_WORKSPACE,
            labels={
                "env": draw.choice(ENVIRONMENTS),
                "region": region,
                "zone": f"{region}-{draw.choice('abc')}",
                "tier": draw.choice(TIERS),
            },
            annotations={"owner": f"team-{draw.randrange(40)}"},
        )
        values: dict[str, Any] = {
            "tier": draw.choice(TIERS),
            "clusterId": f"{draw.getrandbits(64):016x}",
            "cidrs": [f"10.{draw.randrange(256)}.{n * 64}.0/18" for n in range(draw.randint(1, 3))],
            "sizes": {"cpu": draw.randint(2, 64), "memoryGi": draw.choice((8, 16, 32, 64))},
        }
        ingress_class = draw.choice(CLASSES)
        if ingress_class is not None:
            values["ingress"] = {"className": ingress_class}
        clusters.append(Cluster(metadata=meta, spec=ClusterSpec(values=values)))
    return clusters


def realistic_groups() -> list[ClusterGroup]:
    """One ClusterGroup per environment."""
    return [
        ClusterGroup(
            metadata=ObjectMeta(name=env, namespace=DEFAULT_WORKSPACE, labels={"env": env}),
            spec=ClusterGroupSpec(selector=LabelSelector(matchLabels={"env": env})),
        )
        for env in sorted(set(ENVIRONMENTS))
    ]


def realistic_bundles(count: int) -> list[Bundle]:
    """`count` Bundles cycling through BUNDLE_KINDS."""
    kinds = list(BUNDLE_KINDS)
    return [_bundle(f"app-{i + 1:03d}", kinds[i % len(kinds)]) for i in range(count)]


def _bundle(name: str, kind: str) -> Bundle:
    helm: dict[str, Any] = {"repo": "https://charts.example.com", "chart": kind, "version": "1.0.0"}
    spec: dict[str, Any] = {"helm": helm, "namespace": name}
    if kind == "region":
        helm["values"] = {"replicas": 1, "region": "${ cluster.labels.region }"}
        spec["targets"] = [{"clusterSelector": {}}]
    elif kind == "hosts":
        helm["values"] = {
            "ingress": {
                "className": "${ cluster.values.ingress.className | default('nginx') }",
                "hosts": ["${ cluster.name }.${ cluster.labels.region }.example.com"],
                "annotations": {"owner": "${ cluster.annotations.owner }"},
            },
            "clusterId": "${ cluster.values.clusterId }",
            "replicas": 2,
            "env": [{"name": "ZONE", "value": "${ cluster.labels.zone }"}],
        }
        spec["targetMode"] = "AllMatches"
        spec["targets"] = [
            {"name": "all", "clusterSelector": {}},
            {
                "name": "prod",
                "clusterSelector": {"matchLabels": {"env": "prod"}},
                "helm": {"values": {"replicas": 5, "tier": "${ cluster.values.tier | upper }"}},
            },
        ]
    elif kind == "network":
        helm["values"] = {
            "installation": {
                "calicoNetwork": {
                    "ipPools": "${ cluster.values.cidrs | to_objects('cidr', nat=true) }",
                },
                "policy": "${% if cluster.labels.env == 'prod' %}strict${% else %}relaxed"
                "${% endif %}",
            },
        }
        spec["targets"] = [
            {"clusterGroup": "prod", "helm": {"values": {"installation": {"flowLogs": True}}}},
            {"clusterSelector": {}},
        ]
    else:
        helm["values"] = {
            **{
                f"setting{i}": {"enabled": i % 2 == 0, "level": i, "text": "x" * 40}
                for i in range(40)
            },
            "resources": "${ {'cpu': cluster.values.sizes.cpu * 100 ~ 'm',"
            " 'memory': cluster.values.sizes.memoryGi ~ 'Gi'} }",
            "podAnnotations": {"bundler.dev/cluster": "${ cluster.namespace }/${ cluster.name }"},
        }
        spec["targets"] = [{"clusterSelector": {}}]
    return Bundle.model_validate(
        {"metadata": {"name": name, "namespace": DEFAULT_WORKSPACE}, "spec": spec}
    )
