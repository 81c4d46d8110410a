"""bundler.core.labels: which namespace is a Cluster's own, by the labels bundler gives it."""

from __future__ import annotations

import pytest

from bundler.core.labels import (
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
    LABEL_MANAGED_BY,
    MANAGED_BY_BUNDLER,
    is_cluster_namespace_of,
)

OWN = {LABEL_MANAGED_BY: MANAGED_BY_BUNDLER, LABEL_CLUSTER_NAMESPACE: "ws", LABEL_CLUSTER_NAME: "a"}


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (OWN, True),
        ({**OWN, "team": "x"}, True),
        (None, False),
        ({}, False),
        ({**OWN, LABEL_MANAGED_BY: "someone-else"}, False),
        ({**OWN, LABEL_CLUSTER_NAMESPACE: "other-ws"}, False),
        ({**OWN, LABEL_CLUSTER_NAME: "b"}, False),
        ({k: v for k, v in OWN.items() if k != LABEL_CLUSTER_NAME}, False),
    ],
    ids=[
        "the-clusters-own",
        "other-labels-too",
        "no-labels",
        "empty-labels",
        "managed-by-someone-else",
        "another-workspaces",
        "another-clusters",
        "cluster-name-missing",
    ],
)
def test_is_cluster_namespace_of(labels: dict[str, str] | None, expected: bool) -> None:
    assert is_cluster_namespace_of(labels, "ws", "a") is expected
