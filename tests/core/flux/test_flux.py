"""Flux objects for one BundleDeployment: sources, HelmRelease fields, names, labels, errors.

Every object built here is validated against the Flux CRD schemas.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import AgentMode
from bundler.core.flux import FluxTarget, flux_labels, release_object_name
from bundler.core.flux.helm_objects import build_flux_objects
from bundler.errors import InvalidInputError
from tests.support.builders import helm_of
from tests.support.core.flux.objects import (
    CLUSTER_NAMESPACE,
    HTTP_REPO,
    MISSING,
    OCI_REPO,
    PULL,
    REMOTE,
    build,
    dig,
    make_bd,
)


@pytest.mark.parametrize(
    ("bd", "target", "expected"),
    [
        (
            make_bd(),
            PULL,
            {
                "source.kind": "HelmRepository",
                "source.metadata.name": "podinfo",
                "source.metadata.namespace": "bundler-system",
                "source.spec": {"url": HTTP_REPO, "interval": "10m"},
                "release.metadata.name": "podinfo",
                "release.metadata.namespace": "bundler-system",
                "release.metadata.annotations": {
                    "bundler.dev/cluster": "fleet-default/prod-eu-1",
                    "bundler.dev/deployment-id": "s-0123abcd",
                },
                "release.spec.chart.spec": {
                    "chart": "podinfo",
                    "version": "6.1.2",
                    "sourceRef": {"kind": "HelmRepository", "name": "podinfo"},
                    "interval": "10m",
                },
                "release.spec.releaseName": "podinfo",
                "release.spec.targetNamespace": "podinfo",
                "release.spec.storageNamespace": "podinfo",
                "release.spec.install": {"createNamespace": True},
                "release.spec.chartRef": MISSING,
                "release.spec.kubeConfig": MISSING,
                "release.spec.values": MISSING,
                "release.spec.dependsOn": MISSING,
            },
        ),
        (
            make_bd(repo=OCI_REPO + "/", version="1.2.3+build.5"),
            PULL,
            {
                "source.kind": "OCIRepository",
                "source.spec": {
                    "url": "oci://registry.example/charts/podinfo",
                    "interval": "10m",
                    "ref": {"tag": "1.2.3_build.5"},
                    "layerSelector": {
                        "mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                        "operation": "copy",
                    },
                },
                "release.spec.chartRef": {
                    "kind": "OCIRepository",
                    "name": "podinfo",
                    "namespace": "bundler-system",
                },
                "release.spec.chart": MISSING,
            },
        ),
        (
            make_bd(),
            FluxTarget(cluster="ws/c", registry_secret="registry-creds"),
            {"source.spec.secretRef": {"name": "registry-creds"}},
        ),
        (
            make_bd(repo=OCI_REPO),
            FluxTarget(cluster="ws/c", registry_secret="registry-creds"),
            {"source.spec.secretRef": {"name": "registry-creds"}},
        ),
        (
            make_bd(repo="HTTP://charts.example:8080/stable"),
            PULL,
            {"source.spec.url": "http://charts.example:8080/stable"},
        ),
        (
            make_bd(),
            REMOTE,
            {
                "source.metadata.namespace": CLUSTER_NAMESPACE,
                "release.metadata.namespace": CLUSTER_NAMESPACE,
                "release.spec.kubeConfig": {
                    "secretRef": {"name": "prod-eu-1-kubeconfig", "key": "value"}
                },
                "release.spec.targetNamespace": "podinfo",
                "release.spec.storageNamespace": "podinfo",
            },
        ),
        (
            make_bd(repo=OCI_REPO),
            REMOTE,
            {
                "release.spec.chartRef.namespace": CLUSTER_NAMESPACE,
                "release.spec.kubeConfig.secretRef.name": "prod-eu-1-kubeconfig",
            },
        ),
        (
            make_bd(),
            FluxTarget(cluster="ws/c", kubeconfig_secret="c-kubeconfig"),
            {"release.spec.kubeConfig": MISSING},
        ),
        (
            make_bd(depends_on=("cert-manager", "ingress")),
            REMOTE,
            {
                "release.spec.dependsOn": [
                    {"name": "cert-manager", "namespace": CLUSTER_NAMESPACE},
                    {"name": "ingress", "namespace": CLUSTER_NAMESPACE},
                ]
            },
        ),
        (
            make_bd(
                install={"remediation": {"retries": 3}, "crds": "CreateReplace"},
                upgrade={"force": True, "remediation": {"retries": 2, "strategy": "uninstall"}},
                rollback={"cleanupOnFail": True},
                uninstall={"keepHistory": True, "deletionPropagation": "foreground"},
                test={"enable": True},
                driftDetection={"mode": "enabled", "ignore": [{"paths": ["/spec/replicas"]}]},
                maxHistory=5,
                timeout="5m",
            ),
            PULL,
            {
                "release.spec.install": {
                    "createNamespace": True,
                    "remediation": {"retries": 3},
                    "crds": "CreateReplace",
                },
                "release.spec.upgrade": {
                    "force": True,
                    "remediation": {"retries": 2, "strategy": "uninstall"},
                },
                "release.spec.rollback": {"cleanupOnFail": True},
                "release.spec.uninstall": {
                    "keepHistory": True,
                    "deletionPropagation": "foreground",
                },
                "release.spec.test": {"enable": True},
                "release.spec.driftDetection": {
                    "mode": "enabled",
                    "ignore": [{"paths": ["/spec/replicas"]}],
                },
                "release.spec.maxHistory": 5,
                "release.spec.timeout": "5m",
            },
        ),
        (
            make_bd(repo=OCI_REPO, interval="1h30m"),
            PULL,
            {"release.spec.interval": "1h30m", "source.spec.interval": "1h30m"},
        ),
        (
            make_bd(interval="2m"),
            PULL,
            {"release.spec.interval": "2m", "release.spec.chart.spec.interval": "2m"},
        ),
        (
            make_bd(
                values={"replicaCount": 2, "ingress": {"hosts": ["a.example"]}},
                valuesFrom=[
                    {"kind": "Secret", "name": "db-creds", "valuesKey": "values.yaml"},
                    {"kind": "ConfigMap", "name": "tier", "targetPath": "tier", "optional": True},
                ],
            ),
            PULL,
            {
                "release.spec.values": {"replicaCount": 2, "ingress": {"hosts": ["a.example"]}},
                "release.spec.valuesFrom": [
                    {"kind": "Secret", "name": "db-creds", "valuesKey": "values.yaml"},
                    {"kind": "ConfigMap", "name": "tier", "targetPath": "tier", "optional": True},
                ],
            },
        ),
        (make_bd(values={}, valuesFrom=[]), PULL, {"release.spec.values": MISSING}),
        (make_bd(releaseName="web"), PULL, {"release.spec.releaseName": "web"}),
        (
            make_bd(bundle="web-app", name="web-app-bd"),
            PULL,
            {
                "release.spec.releaseName": "web-app",
                "release.metadata.name": "web-app",
                "source.metadata.name": "web-app",
            },
        ),
        (
            make_bd(name="lonely", labels={}),
            PULL,
            {"release.spec.releaseName": "lonely", "release.metadata.name": "lonely"},
        ),
    ],
    ids=[
        "http-repo",
        "oci-repo-tag-and-layer-selector",
        "http-credentials-secret-ref",
        "oci-credentials-secret-ref",
        "http-scheme-lowercased",
        "remote-mode-kubeconfig",
        "remote-mode-oci-chart-ref-namespace",
        "pull-mode-ignores-kubeconfig-secret",
        "depends-on",
        "pass-through-fields",
        "interval-on-oci-source",
        "interval-on-chart",
        "values-and-values-from",
        "empty-values-omitted",
        "explicit-release-name",
        "names-from-bundle-label",
        "names-fall-back-to-bd-name",
    ],
)
def test_flux_objects(bd: BundleDeployment, target: FluxTarget, expected: dict[str, Any]) -> None:
    objects = build(bd, target)
    for path, value in expected.items():
        whole = {"source": objects.source, "release": objects.release}
        if value is MISSING:
            *parents, leaf = path.split(".")
            assert leaf not in dig(whole, ".".join(parents)), path
        else:
            assert dig(whole, path) == value, path


def test_every_object_carries_the_labels() -> None:
    bd = make_bd()
    labels = {
        "bundler.dev/bundle-name": "podinfo",
        "bundler.dev/bundle-namespace": "fleet-default",
        "bundler.dev/bundledeployment": "podinfo",
        "bundler.dev/cluster-name": "prod-eu-1",
        "bundler.dev/cluster-namespace": "fleet-default",
        "bundler.dev/managed-by": "bundler",
    }
    assert flux_labels(bd) == labels
    assert [obj["metadata"]["labels"] for obj in build(bd).all()] == [labels, labels]


def test_apply_order_is_source_then_release() -> None:
    objects = build(make_bd())
    assert [obj["kind"] for obj in objects.all()] == ["HelmRepository", "HelmRelease"]


LONG = "a-very-long-bundle-name-" * 4  # 96 characters


@pytest.mark.parametrize(
    "bd",
    [
        make_bd(bundle=LONG + "x"),
        make_bd(bundle=LONG + "x", name=LONG + "x-deployment", repo=OCI_REPO),
        make_bd(bundle="short", releaseName=LONG[:60]),
    ],
    ids=["long-bundle-name", "long-bundle-and-bd-names-oci", "long-release-name"],
)
def test_long_names_are_shortened_and_stable(bd: BundleDeployment) -> None:
    first, second = build(bd), build(bd)
    assert first == second
    assert len(first.release["spec"]["releaseName"]) <= 53
    for obj in first.all():
        assert len(obj["metadata"]["name"]) <= 63
        assert all(len(value) <= 63 for value in obj["metadata"]["labels"].values())


def test_shortened_names_stay_distinct() -> None:
    one, two = build(make_bd(bundle=LONG + "one")), build(make_bd(bundle=LONG + "two"))
    assert one.release["metadata"]["name"] != two.release["metadata"]["name"]
    assert one.release["spec"]["releaseName"] != two.release["spec"]["releaseName"]


@pytest.mark.parametrize("dependency", ["cert-manager", LONG + "dependency"], ids=["short", "long"])
def test_depends_on_names_the_dependency_release(dependency: str) -> None:
    dependent = build(make_bd(bundle="app", depends_on=(dependency,)), REMOTE)
    its_dependency = build(make_bd(bundle=dependency), REMOTE)
    assert dependent.release["spec"]["dependsOn"] == [
        {"name": its_dependency.release["metadata"]["name"], "namespace": CLUSTER_NAMESPACE}
    ]
    assert its_dependency.release["metadata"]["name"] == release_object_name(dependency)


def _rich_bd() -> BundleDeployment:
    return make_bd(
        repo=OCI_REPO,
        values={"z": 1, "a": {"list": [1, "two", None, True, 1.5]}},
        valuesFrom=[{"kind": "Secret", "name": "s"}],
        install={"remediation": {"retries": 3}},
        driftDetection={"mode": "warn"},
        depends_on=("cert-manager",),
    )


def test_output_is_deterministic_plain_json() -> None:
    first = json.dumps(build(_rich_bd(), REMOTE).all())
    second = json.dumps(build(_rich_bd(), REMOTE).all())
    assert first == second
    assert json.loads(first) == build(_rich_bd(), REMOTE).all()


def test_output_does_not_alias_the_bundle_deployment() -> None:
    bd = _rich_bd()
    objects = build(bd)
    objects.release["spec"]["values"]["a"]["list"].append("mutated")
    objects.release["metadata"]["labels"]["x"] = "y"
    assert build(bd).release["spec"]["values"]["a"]["list"] == [1, "two", None, True, 1.5]
    assert "x" not in build(bd).release["metadata"]["labels"]
    assert helm_of(bd.spec.options).values == {"z": 1, "a": {"list": [1, "two", None, True, 1.5]}}


@pytest.mark.parametrize(
    ("bd", "target", "field", "message"),
    [
        (make_bd(repo="git://example.com/charts"), PULL, "options.helm.repo", "scheme 'git'"),
        (make_bd(repo="charts.example.com"), PULL, "options.helm.repo", "without a scheme"),
        (make_bd(repo="https:///charts"), PULL, "options.helm.repo", "no host"),
        (make_bd(repo=None), PULL, "options.helm.repo", "is required"),
        (make_bd(chart=None), PULL, "options.helm.chart", "is required"),
        (make_bd(version=None), PULL, "options.helm.version", "is required"),
        (make_bd(version="6.*"), PULL, "options.helm.version", "not a concrete version"),
        (make_bd(version=">=1.0.0 <2.0.0"), PULL, "options.helm.version", "concrete"),
        (make_bd(version="1.2"), PULL, "options.helm.version", "concrete"),
        (
            make_bd(),
            FluxTarget(cluster="ws/c", mode=AgentMode.REMOTE),
            "BundleDeployment",
            "needs the cluster's kubeconfig Secret",
        ),
        (
            make_bd(install={"remediation": {"strategy": "rollback"}}),
            PULL,
            "options.helm.install.remediation.strategy",
            "upgrades only",
        ),
        (
            make_bd(driftDetection={"ignore": [{"paths": ["/a"], "target": {"knd": "Pod"}}]}),
            PULL,
            "options.helm.driftDetection.ignore[0].target",
            "unknown fields ['knd']",
        ),
    ],
    ids=[
        "unknown-scheme",
        "no-scheme",
        "no-host",
        "missing-repo",
        "missing-chart",
        "missing-version",
        "wildcard-version",
        "range-version",
        "partial-version",
        "remote-without-kubeconfig-secret",
        "install-remediation-strategy",
        "unknown-drift-target-field",
    ],
)
def test_invalid_input(bd: BundleDeployment, target: FluxTarget, field: str, message: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        build_flux_objects(bd, target)
    assert field in str(caught.value)
    assert message in str(caught.value)
    assert f"{CLUSTER_NAMESPACE}/podinfo" in str(caught.value)


def test_errors_never_repeat_credentials_in_urls() -> None:
    bd = make_bd(repo="https://user:s3cret@charts.example/stable")
    with pytest.raises(InvalidInputError) as caught:
        build_flux_objects(bd, PULL)
    assert "helm.secretRef" in str(caught.value)
    assert "s3cret" not in str(caught.value)


@pytest.mark.parametrize(
    ("repo", "insecure", "expected"),
    [(OCI_REPO, True, True), (OCI_REPO, None, None), (OCI_REPO, False, None)],
    ids=["oci-insecure", "oci-default", "oci-explicitly-secure"],
)
def test_insecure_reaches_the_oci_repository(
    repo: str, insecure: bool | None, expected: bool | None
) -> None:
    source = build(make_bd(repo=repo, insecure=insecure)).source
    assert source["spec"].get("insecure") == expected


def test_flux_depends_only_on_dependencies_that_must_be_ready() -> None:
    bd = make_bd(bundle="app", depends_on=("cert-manager", "db", "ingress"))
    accepted = {"cert-manager": None, "db": ["NotReady", "Ready"], "ingress": ["Ready", "Modified"]}
    entries = [
        {
            "name": d.name,
            **({"acceptedStates": accepted[d.name or ""]} if accepted[d.name or ""] else {}),
        }
        for d in bd.spec.options.dependsOn
    ]
    spec = {**bd.spec.to_wire(), "options": {**bd.spec.options.to_wire(), "dependsOn": entries}}
    relaxed = BundleDeployment.model_validate({**bd.to_wire(), "spec": spec})
    names = [d["name"] for d in build(relaxed).release["spec"]["dependsOn"]]
    assert names == ["cert-manager", "ingress"]  # Flux would wait for db to be Ready
