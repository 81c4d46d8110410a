"""bundler.agent.ownership: what counts as drift, and updates that keep what others wrote."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.agent.ownership import merged, needs_write


def release(spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    metadata = {"name": "app", "namespace": "bundler-system", **meta}
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": metadata,
        "spec": spec,
    }


OURS = {"bundler.dev/managed-by": "bundler"}
SPEC: dict[str, Any] = {
    "interval": "10m",
    "chart": {"spec": {"chart": "app", "version": "1.0.0"}},
    "values": {"a": 1},
}
DESIRED = release(SPEC, labels=OURS, annotations={"bundler.dev/deployment-id": "s-1"})


@pytest.mark.parametrize(
    ("live", "drift"),
    [
        (release(SPEC, labels=OURS, annotations={"bundler.dev/deployment-id": "s-1"}), False),
        (
            release(
                SPEC,
                labels={**OURS, "team": "x"},
                annotations={"bundler.dev/deployment-id": "s-1", "flux": "y"},
                finalizers=["finalizers.fluxcd.io"],
                resourceVersion="7",
            ),
            False,
        ),
        (
            release(
                {
                    **SPEC,
                    "chart": {
                        "spec": {**SPEC["chart"]["spec"], "reconcileStrategy": "ChartVersion"}
                    },
                },
                labels=OURS,
                annotations={"bundler.dev/deployment-id": "s-1"},
            ),
            False,
        ),
        (release(SPEC, labels=OURS, annotations={"bundler.dev/deployment-id": "s-0"}), True),
        (release(SPEC, annotations={"bundler.dev/deployment-id": "s-1"}), True),
        (
            release(
                {**SPEC, "values": {"a": 1, "b": 2}},
                labels=OURS,
                annotations={"bundler.dev/deployment-id": "s-1"},
            ),
            True,
        ),
        (
            release(
                {**SPEC, "values": {"a": True}},
                labels=OURS,
                annotations={"bundler.dev/deployment-id": "s-1"},
            ),
            True,
        ),
        (
            release(
                {**SPEC, "suspend": True},
                labels=OURS,
                annotations={"bundler.dev/deployment-id": "s-1"},
            ),
            True,
        ),
        (
            release(
                {**SPEC, "interval": "1m"},
                labels=OURS,
                annotations={"bundler.dev/deployment-id": "s-1"},
            ),
            True,
        ),
    ],
    ids=[
        "identical",
        "others-labels-annotations-finalizers",
        "server-default-nested",
        "new-deployment-id",
        "our-label-removed",
        "values-key-added",
        "values-bool-for-int",
        "suspended-by-hand",
        "spec-field-edited",
    ],
)
def test_needs_write(live: dict[str, Any], drift: bool) -> None:
    assert needs_write(DESIRED, live) is drift


def test_source_provider_default_is_not_drift() -> None:
    desired: dict[str, Any] = {
        "kind": "HelmRepository",
        "metadata": {},
        "spec": {"url": "https://x", "interval": "10m"},
    }
    live = {
        "kind": "HelmRepository",
        "metadata": {},
        "spec": {**desired["spec"], "provider": "generic"},
    }
    assert not needs_write(desired, live)


def test_secret_data_is_compared_exactly() -> None:
    desired = {"kind": "Secret", "metadata": {}, "type": "Opaque", "data": {"a": "eA=="}}
    assert needs_write(desired, {**desired, "data": {"a": "eA==", "b": "eQ=="}})
    assert not needs_write(desired, dict(desired))


def test_merged_keeps_what_others_wrote() -> None:
    live = release(
        {**SPEC, "suspend": True, "values": {"old": 1}},
        labels={"bundler.dev/managed-by": "bundler", "bundler.dev/stale": "x", "team": "a"},
        annotations={"bundler.dev/deployment-id": "s-0", "flux": "keep"},
        finalizers=["finalizers.fluxcd.io"],
        resourceVersion="9",
    )
    live["status"] = {"observedGeneration": 3}
    out = merged(DESIRED, live)
    assert out["spec"] == SPEC
    assert out["status"] == {"observedGeneration": 3}
    assert out["metadata"]["finalizers"] == ["finalizers.fluxcd.io"]
    assert out["metadata"]["resourceVersion"] == "9"
    assert out["metadata"]["labels"] == {"bundler.dev/managed-by": "bundler", "team": "a"}
    assert out["metadata"]["annotations"] == {"bundler.dev/deployment-id": "s-1", "flux": "keep"}
    assert not needs_write(DESIRED, out)
