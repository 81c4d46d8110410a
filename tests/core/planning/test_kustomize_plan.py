"""Planning a Kustomize Bundle: spec.kustomize with the deciding targets' overrides merged in,
substitutions and patches templated per cluster, the artifact's version resolved (or exact)
written as its tag, manager-only fields left out."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.bundledeployment import DeploymentOptions
from bundler.core.planning import plan_bundle
from bundler.core.planning.decide import decide_bundle
from bundler.core.planning.version_query import VersionQuery
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


SUBSTITUTE = {"cluster_name": "${ cluster.name }", "region": "${ cluster.labels.region }"}
REGION_PATCH = "metadata:\n  name: web\n  labels: {region: '${ cluster.labels.region }'}\n"


@pytest.mark.parametrize(
    ("kustomize", "field", "expected_prod", "expected_dev"),
    [
        pytest.param(
            {"postBuild": {"substitute": SUBSTITUTE}},
            "postBuild",
            {"substitute": {"cluster_name": "prod-1", "region": "eu"}},
            {"substitute": {"cluster_name": "dev-1", "region": "us"}},
            id="substitute-per-cluster",
        ),
        pytest.param(
            {"postBuild": {"substitute": {"replicas": "${ 2 + 1 }", "on": "${ true }"}}},
            "postBuild",
            {"substitute": {"replicas": "3", "on": "true"}},
            {"substitute": {"replicas": "3", "on": "true"}},
            id="numbers-and-booleans-become-text",
        ),
        pytest.param(
            {"patches": [{"patch": REGION_PATCH, "target": {"kind": "Deployment"}}]},
            "patches",
            [
                {
                    "patch": "metadata:\n  name: web\n  labels:\n    region: eu\n",
                    "target": {"kind": "Deployment"},
                }
            ],
            [
                {
                    "patch": "metadata:\n  name: web\n  labels:\n    region: us\n",
                    "target": {"kind": "Deployment"},
                }
            ],
            id="patches-per-cluster-as-yaml",
        ),
        pytest.param(
            {"postBuild": {"substitute": SUBSTITUTE}, "disableTemplating": True},
            "postBuild",
            {"substitute": SUBSTITUTE},
            {"substitute": SUBSTITUTE},
            id="disable-templating-passes-as-written",
        ),
        pytest.param(
            {"postBuild": {"substitute": {"literal": "$${HOME}"}}},
            "postBuild",
            {"substitute": {"literal": "${HOME}"}},
            {"substitute": {"literal": "${HOME}"}},
            id="double-dollar-is-fluxs-own-variable",
        ),
    ],
)
def test_substitutions_and_patches_are_templated_per_cluster(
    kustomize: dict[str, Any], field: str, expected_prod: Any, expected_dev: Any
) -> None:
    options = _options(kustomize, {})
    assert options["prod-1"]["kustomize"][field] == expected_prod
    assert options["dev-1"]["kustomize"][field] == expected_dev


def test_a_substitution_rendering_to_a_map_fails_for_its_cluster_only() -> None:
    b = kustomize_bundle(
        [REST], kustomize={"postBuild": {"substitute": {"labels": "${ cluster.labels }"}}}
    )
    plan = plan_bundle(b, CLUSTERS, [])
    assert not plan.deployments
    assert len(plan.errors) == 2
    assert "postBuild.substitute['labels']: renders to dict; substitutions are text" in (
        plan.errors[0].message
    )


@pytest.mark.parametrize(
    ("oci", "resolved", "expected"),
    [
        pytest.param({"version": "1.*"}, {"1.*": "1.4.2"}, {"tag": "1.4.2"}, id="range-resolved"),
        pytest.param({}, {"*": "2.0.0"}, {"tag": "2.0.0"}, id="latest-stable"),
        pytest.param(
            {"version": "^1"}, {"^1": "1.0.0+build.5"}, {"tag": "1.0.0_build.5"}, id="plus-as-tag"
        ),
        pytest.param({"version": "1.2.3"}, {}, {"tag": "1.2.3"}, id="exact-needs-no-resolution"),
        pytest.param({"version": "1.*"}, {}, {"version": "1.*"}, id="offline-range-as-written"),
        pytest.param({"tag": "latest"}, {}, {"tag": "latest"}, id="tag-as-written"),
    ],
)
def test_an_artifact_version_resolves_to_the_tag_every_cluster_gets(
    oci: dict[str, Any], resolved: dict[str, str], expected: dict[str, Any]
) -> None:
    source = {"oci": {"url": ARTIFACT, **oci}}
    b = kustomize_bundle([REST], kustomize={"source": source})
    versions = {(ARTIFACT, "", wanted): found for wanted, found in resolved.items()}
    plan = plan_bundle(b, CLUSTERS, [], resolved=versions)
    assert {d.options.to_wire()["kustomize"]["source"]["oci"]["url"] for d in plan.deployments} == {
        ARTIFACT
    }
    for planned in plan.deployments:
        oci_wire = planned.options.to_wire()["kustomize"]["source"]["oci"]
        assert {k: v for k, v in oci_wire.items() if k != "url"} == expected


@pytest.mark.parametrize(
    ("kustomize", "expected"),
    [
        pytest.param(
            {"source": {"oci": {"url": ARTIFACT, "version": "1.*", "secretRef": {"name": "c"}}}},
            VersionQuery(ARTIFACT, "", "1.*", "c"),
            id="range",
        ),
        pytest.param(
            {"source": {"oci": {"url": ARTIFACT}}},
            VersionQuery(ARTIFACT, "", "*"),
            id="no-version-is-latest-stable",
        ),
        pytest.param({"source": {"oci": {"url": ARTIFACT, "version": "1.0.0"}}}, None, id="exact"),
        pytest.param({"source": {"oci": {"url": ARTIFACT, "tag": "dev"}}}, None, id="tag"),
        pytest.param({"source": GIT}, None, id="git-follows-its-ref"),
    ],
)
def test_the_decide_step_asks_for_an_artifacts_range(
    kustomize: dict[str, Any], expected: VersionQuery | None
) -> None:
    b = kustomize_bundle([REST], kustomize=kustomize)
    decisions = decide_bundle(b, CLUSTERS, [])
    assert [d.query for d in decisions] == [expected, expected]
