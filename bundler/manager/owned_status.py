"""The status fields the manager owns on Bundles, Clusters and ClusterGroups.

The status controllers (bundler.manager.controllers.status_controllers) merge-patch exactly these
fields, and the event routes (bundler.manager.observed.routing) wake a roll-up when one of them
changes under it. Every other status field is someone else's: a Cluster's `status.agent` is the
agent's and is never sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

BUNDLE_FIELDS = (
    "observedGeneration",
    "resolvedVersion",
    "resolvedImages",
    "summary",
    "display",
    "nonReady",
    "rollout",
    "schedule",
    "conditions",
)
CLUSTER_FIELDS = ("namespace", "summary", "display", "nonReadyBundles", "schedule", "conditions")
GROUP_FIELDS = (
    "clusterCount",
    "nonReadyClusterCount",
    "nonReadyClusters",
    "summary",
    "display",
    "conditions",
)


def owned(status: BaseModel, fields: Sequence[str]) -> dict[str, Any]:
    """The `fields` of a status model as JSON; unset ones as None, so a patch removes them."""
    wire = status.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {name: wire.get(name) for name in fields}
