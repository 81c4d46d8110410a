"""A BundleDeployment's release as helm-controller installs it: name, namespace, values, CRDs and
the cluster's Kube version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import Cluster
from bundler.errors import TemplateError
from bundler.manifests.engine import MAX_RENDERED_BYTES, ReleaseInput
from bundler.manifests.release import (
    cluster_kube_version,
    release_input,
    release_manifest,
    render_release,
)

CHART = Path("/charts/demo-1.0.0.tgz")


def bd(helm: dict[str, Any], name: str = "demo") -> BundleDeployment:
    return BundleDeployment.model_validate(
        {
            "metadata": {
                "name": name,
                "namespace": "cluster-ws-a-0",
                "labels": {"bundler.dev/bundle-name": "demo"},
            },
            "spec": {
                "options": {"helm": {"chart": "demo", **helm}, "namespace": "apps"},
                "deploymentID": "s-1",
            },
        }
    )


def cluster(values: dict[str, Any]) -> Cluster:
    return Cluster.model_validate(
        {"metadata": {"name": "a", "namespace": "ws"}, "spec": {"values": values}}
    )


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"Cluster": {"spec": {"topology": {"version": "v1.30.2"}}}}, "v1.30.2"),
        ({"Cluster": {"spec": {}}}, None),
        ({"Cluster": "not a map"}, None),
        ({}, None),
    ],
    ids=["capi-topology-version", "no-topology", "not-a-map", "no-capi-cluster"],
)
def test_the_kube_version_comes_from_the_capi_topology(
    values: dict[str, Any], expected: str | None
) -> None:
    assert cluster_kube_version(cluster(values)) == expected


@pytest.mark.parametrize(
    ("helm", "expected"),
    [
        ({"values": {"a": 1}}, ReleaseInput(CHART, "demo", "apps", {"a": 1})),
        ({"releaseName": "web"}, ReleaseInput(CHART, "web", "apps")),
        ({"install": {"skipCRDs": True}}, ReleaseInput(CHART, "demo", "apps", include_crds=False)),
        ({"install": {"crds": "Skip"}}, ReleaseInput(CHART, "demo", "apps", include_crds=False)),
        ({"install": {"crds": "Create"}}, ReleaseInput(CHART, "demo", "apps")),
    ],
    ids=["values", "release-name", "skip-crds", "crds-policy-skip", "crds-policy-create"],
)
def test_the_release_is_the_one_helm_controller_installs(
    helm: dict[str, Any], expected: ReleaseInput
) -> None:
    assert release_input(bd(helm), CHART, None) == expected


def test_a_long_bundle_name_is_shortened_as_for_the_helmrelease() -> None:
    long_name = "b" * 60
    release = release_input(bd({}, name=long_name), CHART, cluster({}))
    assert len(release.name) <= 53


class _Text:
    name = "text"

    def __init__(self, text: str) -> None:
        self.text = text

    def render(self, release: ReleaseInput) -> str:
        return self.text


@pytest.mark.parametrize(
    ("text", "message"),
    [("a: [", "invalid YAML"), ("- 1\n", "not a Kubernetes object"), ("kind: 3\n", "not a Kub")],
    ids=["bad-yaml", "a-list", "kind-not-text"],
)
def test_output_that_is_not_objects_is_a_template_error(text: str, message: str) -> None:
    with pytest.raises(TemplateError, match=message):
        render_release(_Text(text), ReleaseInput(CHART, "demo", "apps"))


def test_empty_documents_are_dropped() -> None:
    text = "---\n---\nkind: ConfigMap\n---\n"
    assert render_release(_Text(text), ReleaseInput(CHART, "demo", "apps")) == [
        {"kind": "ConfigMap"}
    ]


def test_output_over_the_cap_is_a_template_error() -> None:
    text = "kind: ConfigMap\n" + "#" * MAX_RENDERED_BYTES
    with pytest.raises(TemplateError, match="32 MiB cap"):
        render_release(_Text(text), ReleaseInput(CHART, "demo", "apps"))


def doc(name: str, hook: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if hook is not None:
        meta["annotations"] = {"helm.sh/hook": hook}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


# (objects, tests enabled, names kept, names marked as test hooks)
MANIFEST_CASES = [
    ("plain-objects-stay", [doc("a"), doc("b")], False, ["a", "b"], []),
    ("install-hooks-go", [doc("a"), doc("job", "pre-install,pre-upgrade")], False, ["a"], []),
    ("test-hooks-go-without-tests", [doc("a"), doc("t", "test")], False, ["a"], []),
    ("test-hooks-stay-with-tests", [doc("a"), doc("t", "test")], True, ["a", "t"], ["t"]),
    ("old-test-success-spelling", [doc("t", "test-success")], True, ["t"], ["t"]),
    ("other-hooks-go-with-tests", [doc("j", "post-install")], True, [], []),
    ("empty-hook-annotation-is-no-hook", [doc("a", "")], False, ["a"], []),
]


@pytest.mark.parametrize(
    ("objects", "tests", "kept", "marked"),
    [c[1:] for c in MANIFEST_CASES],
    ids=[c[0] for c in MANIFEST_CASES],
)
def test_the_release_manifest_leaves_hooks_out_as_helm_does(
    objects: list[dict[str, Any]], tests: bool, kept: list[str], marked: list[str]
) -> None:
    manifest = release_manifest(objects, tests=tests)
    assert [o["metadata"]["name"] for o in manifest] == kept
    assert [
        o["metadata"]["name"]
        for o in manifest
        if o["metadata"].get("annotations", {}).get("bundler.dev/helm-hook") == "test"
    ] == marked


def test_test_enable_shows_the_test_hooks() -> None:
    assert release_input(bd({"test": {"enable": True}}), CHART, None).tests is True
    assert release_input(bd({}), CHART, None).tests is False
