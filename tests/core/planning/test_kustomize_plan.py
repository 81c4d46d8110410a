"""Planning a Kustomize Bundle: spec.kustomize with the deciding targets' overrides merged in,
the artifact's exact version written as its tag, manager-only fields left out."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.bundledeployment import DeploymentOptions
from bundler.core.planning import plan_bundle
from tests.support.builders import ARTIFACT, WS, cluster, kustomize_bundle

CLUSTERS = [
    cluster("prod-1", {"env": "prod", "region": "eu"}),
    cluster("dev-1", {"env": "dev", "region": "us"}),
]
PROD = {"name": "prod", "clusterSelector": {"matchLabels": {"env": "prod"}}}
REST = {"name": "rest", "clusterSelector": {}}
GIT = {"git": {"url": "https://git.example/app.git", "ref": {"branch": "main"}}}


def _options(kustomize: dict[str, Any], prod: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """The options (wire JSON) of each cluster, by cluster name."""
    b = kustomize_bundle([{**PROD, **prod}, REST], kustomize=kustomize, **spec)
    plan = plan_bundle(b, CLUSTERS, [])
    assert not plan.errors
    return {d.cluster.split("/")[1]: d.options.to_wire() for d in plan.deployments}


@pytest.mark.parametrize(
    ("kustomize", "prod", "spec", "expected_prod", "expected_dev"),
    [
        pytest.param(
            {},
            {"kustomize": {"path": "./prod", "prune": False}},
            {},
            {
                "source": {"oci": {"url": ARTIFACT, "tag": "1.0.0"}},
                "path": "./prod",
                "prune": False,
            },
            {"source": {"oci": {"url": ARTIFACT, "tag": "1.0.0"}}, "path": "./deploy"},
            id="scalars-replace",
        ),
        pytest.param(
            {"postBuild": {"substitute": {"a": "1", "b": "2"}}, "components": ["x", "y"]},
            {"kustomize": {"postBuild": {"substitute": {"b": "3"}}, "components": ["z"]}},
            {},
            {
                "source": {"oci": {"url": ARTIFACT, "tag": "1.0.0"}},
                "path": "./deploy",
                "postBuild": {"substitute": {"a": "1", "b": "3"}},
                "components": ["z"],
            },
            {
                "source": {"oci": {"url": ARTIFACT, "tag": "1.0.0"}},
                "path": "./deploy",
                "postBuild": {"substitute": {"a": "1", "b": "2"}},
                "components": ["x", "y"],
            },
            id="maps-merge-lists-replace",
        ),
        pytest.param(
            {"source": {"oci": {"url": ARTIFACT, "version": "2.1.0"}}, "pollInterval": "1m"},
            {"kustomize": {"source": GIT, "disableTemplating": True}},
            {},
            {"source": GIT, "path": "./deploy"},
            {"source": {"oci": {"url": ARTIFACT, "tag": "2.1.0"}}, "path": "./deploy"},
            id="other-source-kind-replaces-exact-version-is-the-tag",
        ),
    ],
)
def test_targets_override_kustomize_like_helm(
    kustomize: dict[str, Any],
    prod: dict[str, Any],
    spec: dict[str, Any],
    expected_prod: dict[str, Any],
    expected_dev: dict[str, Any],
) -> None:
    options = _options(kustomize, prod, **spec)
    assert options["prod-1"]["kustomize"] == expected_prod
    assert options["dev-1"]["kustomize"] == expected_dev
    assert "helm" not in options["prod-1"]


def test_the_namespace_of_a_kustomize_deployment_is_the_bundles_or_its_targets() -> None:
    options = _options({}, {"namespace": "prod-apps"}, namespace="apps")
    assert (options["prod-1"]["namespace"], options["dev-1"]["namespace"]) == ("prod-apps", "apps")


def test_kustomize_options_round_trip_as_the_api_reads_them() -> None:
    b = kustomize_bundle([REST])
    (planned, _) = plan_bundle(b, CLUSTERS, []).deployments
    assert DeploymentOptions.model_validate(planned.options.to_wire()) == planned.options
    assert planned.deployment_id.startswith("s-")
    assert planned.namespace.startswith(f"cluster-{WS}-")
