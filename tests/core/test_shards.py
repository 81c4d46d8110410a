"""Which shard owns a workspace (a stable hash) and which workspace an object belongs to."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from bundler.api.resources import (
    BUNDLE,
    BUNDLE_DEPLOYMENT,
    CLUSTER_ROLE,
    NAMESPACE,
    SECRET,
    Resource,
)
from bundler.core.shards import Shard, shard_of, workspace_of

MANAGED = {"bundler.dev/managed-by": "bundler", "bundler.dev/cluster-namespace": "team-a"}


@pytest.mark.parametrize(
    ("workspace", "of_three", "of_seven"),
    [("fleet-default", 0, 4), ("team-a", 0, 3), ("team-b", 2, 1)],
)
def test_the_hash_is_pinned(workspace: str, of_three: int, of_seven: int) -> None:
    # SHA-256, never Python's per-process hash(): every manager, now and after an upgrade, agrees.
    assert (shard_of(workspace, 3), shard_of(workspace, 7), shard_of(workspace, 1)) == (
        of_three,
        of_seven,
        0,
    )


def test_every_workspace_has_exactly_one_owner_and_the_split_is_even() -> None:
    workspaces = [f"team-{i}" for i in range(300)]
    shards = [Shard(i, 3) for i in range(3)]
    owners = Counter(sum(1 for s in shards if s.owns(ws)) for ws in workspaces)
    assert owners == {1: 300}
    per_shard = Counter(shard_of(ws, 3) for ws in workspaces)
    assert all(70 <= n <= 130 for n in per_shard.values()), per_shard


def obj(namespace: str | None, name: str = "x", **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta}


@pytest.mark.parametrize(
    ("res", "body", "expected"),
    [
        pytest.param(BUNDLE, obj("team-a"), "team-a", id="bundle-its-namespace"),
        pytest.param(
            BUNDLE_DEPLOYMENT,
            obj("cluster-team-a-x-1", **{"bundler.dev/bundle-namespace": "team-a"}),
            "team-a",
            id="deployment-its-bundles-namespace",
        ),
        pytest.param(
            SECRET, obj("cluster-team-a-x-1", **MANAGED), "team-a", id="copy-its-clusters"
        ),
        pytest.param(NAMESPACE, obj(None, "cluster-team-a-x-1", **MANAGED), "team-a", id="ns"),
        pytest.param(NAMESPACE, obj(None, "team-b"), "team-b", id="workspace-namespace-itself"),
        pytest.param(
            SECRET,
            obj("team-b", **{"bundler.dev/cluster-namespace": "team-a"}),
            "team-b",
            id="labels-count-only-on-bundlers-objects",
        ),
        pytest.param(CLUSTER_ROLE, obj(None), None, id="cluster-scoped-no-workspace"),
    ],
)
def test_the_workspace_of_an_object(res: Resource, body: dict[str, Any], expected: str) -> None:
    assert workspace_of(res, body) == expected


@pytest.mark.parametrize(("index", "count"), [(3, 3), (-1, 2), (0, 0)])
def test_a_shard_outside_the_count_is_refused(index: int, count: int) -> None:
    with pytest.raises(ValueError, match="shard index"):
        Shard(index, count)
