"""Every field of helm-controller v1.6.2's HelmRelease and source-controller v1.9.1's sources that a
Bundle may set reaches the Flux objects under Flux's name, and what Flux's own rules refuse is
refused with the field named. Every object built is validated against the upstream CRD schemas
(tests/data/schemas/flux), including their CEL rules."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.flux_source import SourceOptions
from bundler.api.helm import HelmOptions
from bundler.core.flux.helm_objects import CHART_FIELDS, build_flux_objects
from bundler.core.flux.release import PASS_THROUGH, WRITTEN
from bundler.core.flux.source import SOURCE_FIELDS
from bundler.errors import InvalidInputError
from tests.support.core.flux.objects import (
    HTTP_REPO,
    MISSING,
    OCI_REPO,
    PULL,
    REMOTE,
    build,
    dig,
    make_bd,
)

# What no HelmRelease field is: read by bundler itself (the chart, its version, credentials,
# templating) or by the manager only.
BUNDLERS_OWN = ("repo", "chart", "version", "secretRef", "insecure", "source")
MANAGER_ONLY = ("pollInterval", "disableTemplating")

PATCH = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-values}\ndata: {a: b}\n"
CEL = "status.conditions.filter(c, c.type == 'Ready').all(c, c.status == 'True')"


def test_every_helm_field_has_a_place() -> None:
    placed = {*PASS_THROUGH, *WRITTEN, *CHART_FIELDS, *BUNDLERS_OWN, *MANAGER_ONLY}
    assert set(HelmOptions.model_fields) == placed


def test_every_source_field_is_written() -> None:
    assert set(SourceOptions.model_fields) == set(SOURCE_FIELDS)


@pytest.mark.parametrize(
    ("helm", "expected"),
    [
        pytest.param(
            {
                "install": {
                    "strategy": {"name": "RetryOnFailure", "retryInterval": "2m"},
                    "disableSchemaValidation": True,
                    "disableTakeOwnership": True,
                    "serverSideApply": False,
                },
                "upgrade": {
                    "strategy": {"name": "RemediateOnFailure"},
                    "disableSchemaValidation": True,
                    "disableTakeOwnership": True,
                    "serverSideApply": "enabled",
                    "chartNameChangeStrategy": "InPlaceUpdate",
                },
                "rollback": {"serverSideApply": "auto"},
                "test": {"enable": True, "filters": [{"name": "smoke", "exclude": True}]},
            },
            {
                "spec.install": {
                    "createNamespace": True,
                    "strategy": {"name": "RetryOnFailure", "retryInterval": "2m"},
                    "disableSchemaValidation": True,
                    "disableTakeOwnership": True,
                    "serverSideApply": False,
                },
                "spec.upgrade": {
                    "strategy": {"name": "RemediateOnFailure"},
                    "disableSchemaValidation": True,
                    "disableTakeOwnership": True,
                    "serverSideApply": "enabled",
                    "chartNameChangeStrategy": "InPlaceUpdate",
                },
                "spec.rollback": {"serverSideApply": "auto"},
                "spec.test.filters": [{"name": "smoke", "exclude": True}],
            },
            id="actions: strategies, schema validation, ownership, server-side apply",
        ),
        pytest.param(
            {"install": {"createNamespace": False}},
            {"spec.install": {"createNamespace": False}},
            id="createNamespace false wins over bundler's true",
        ),
        pytest.param(
            {"storageNamespace": "helm-records"},
            {"spec.storageNamespace": "helm-records", "spec.targetNamespace": "podinfo"},
            id="storageNamespace overrides the release namespace",
        ),
        pytest.param(
            {"suspend": True, "serviceAccountName": "deployer", "persistentClient": False},
            {
                "spec.suspend": True,
                "spec.serviceAccountName": "deployer",
                "spec.persistentClient": False,
            },
            id="suspend, serviceAccountName, persistentClient",
        ),
        pytest.param(
            {"commonMetadata": {"labels": {"team": "a"}, "annotations": {"owner": "b"}}},
            {"spec.commonMetadata": {"labels": {"team": "a"}, "annotations": {"owner": "b"}}},
            id="commonMetadata",
        ),
        pytest.param(
            {
                "postRenderers": [
                    {
                        "kustomize": {
                            "patches": [{"patch": PATCH, "target": {"kind": "ConfigMap"}}],
                            "images": [{"name": "nginx", "newTag": "1.27", "digest": "sha256:1"}],
                        }
                    }
                ],
                "postRenderStrategy": "nohooks",
            },
            {
                "spec.postRenderers.0.kustomize.patches": [
                    {"patch": PATCH, "target": {"kind": "ConfigMap"}}
                ],
                "spec.postRenderers.0.kustomize.images.0.newTag": "1.27",
                "spec.postRenderStrategy": "nohooks",
            },
            id="postRenderers and postRenderStrategy",
        ),
        pytest.param(
            {
                "waitStrategy": {"name": "legacy"},
                "healthCheckExprs": [
                    {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "current": CEL}
                ],
            },
            {
                "spec.waitStrategy": {"name": "legacy"},
                "spec.healthCheckExprs.0.current": CEL,
            },
            id="waitStrategy and healthCheckExprs",
        ),
        pytest.param(
            {"valuesFrom": [{"kind": "Secret", "name": "s", "targetPath": "a.b", "literal": True}]},
            {"spec.valuesFrom.0.literal": True},
            id="valuesFrom literal",
        ),
        pytest.param(
            {"valuesFiles": ["values-prod.yaml"], "ignoreMissingValuesFiles": True},
            {
                "spec.chart.spec.valuesFiles": ["values-prod.yaml"],
                "spec.chart.spec.ignoreMissingValuesFiles": True,
            },
            id="valuesFiles go to the chart template",
        ),
        pytest.param(
            {},
            {
                "spec.suspend": MISSING,
                "spec.serviceAccountName": MISSING,
                "spec.postRenderers": MISSING,
                "spec.commonMetadata": MISSING,
                "spec.chart.spec.valuesFiles": MISSING,
            },
            id="nothing set: nothing written",
        ),
    ],
)
def test_helm_release_fields(helm: dict[str, Any], expected: dict[str, Any]) -> None:
    release = build(make_bd(**helm)).release
    _check(release, expected)


@pytest.mark.parametrize(
    ("repo", "source", "expected"),
    [
        pytest.param(
            OCI_REPO,
            {
                "provider": "aws",
                "verify": {
                    "secretRef": {"name": "cosign-keys"},
                    "matchOIDCIdentity": [{"issuer": "^https://a$", "subject": "^b$"}],
                },
                "certSecretRef": {"name": "ca"},
                "proxySecretRef": {"name": "proxy"},
                "serviceAccountName": "puller",
                "timeout": "90s",
                "interval": "1h",
            },
            {
                "spec.provider": "aws",
                "spec.verify": {
                    "provider": "cosign",
                    "secretRef": {"name": "cosign-keys"},
                    "matchOIDCIdentity": [{"issuer": "^https://a$", "subject": "^b$"}],
                },
                "spec.certSecretRef": {"name": "ca"},
                "spec.proxySecretRef": {"name": "proxy"},
                "spec.serviceAccountName": "puller",
                "spec.timeout": "90s",
                "spec.interval": "1h",
                "spec.ref": {"tag": "6.1.2"},
            },
            id="oci: provider, verify (cosign by default), secrets, account, timeout",
        ),
        pytest.param(
            OCI_REPO,
            {"verify": {"provider": "notation", "trustedRootSecretRef": {"name": "root"}}},
            {"spec.verify": {"provider": "notation", "trustedRootSecretRef": {"name": "root"}}},
            id="oci: notation and a trusted root",
        ),
        pytest.param(
            HTTP_REPO,
            {"passCredentials": True, "certSecretRef": {"name": "ca"}, "timeout": "30s"},
            {
                "spec.passCredentials": True,
                "spec.certSecretRef": {"name": "ca"},
                "spec.timeout": "30s",
                "spec.interval": "10m",
            },
            id="https: passCredentials, certSecretRef, timeout",
        ),
    ],
)
def test_source_fields(repo: str, source: dict[str, Any], expected: dict[str, Any]) -> None:
    objects = build(make_bd(repo=repo, source=source))
    _check(objects.source, expected)


@pytest.mark.parametrize("target", [PULL, REMOTE], ids=["pull", "remote"])
def test_values_files_of_an_oci_chart_are_read_through_a_helm_chart(target: Any) -> None:
    objects = build(
        make_bd(
            repo=OCI_REPO + "/",
            chart="podinfo",
            version="6.1.2+build.1",
            insecure=True,
            valuesFiles=["values.yaml", "values-prod.yaml"],
            ignoreMissingValuesFiles=True,
            source={
                "provider": "aws",
                "certSecretRef": {"name": "ca"},
                "timeout": "90s",
                "verify": {"secretRef": {"name": "cosign-keys"}},
            },
        ),
        target,
    )
    assert objects.source["kind"] == "HelmRepository"
    assert objects.source["spec"] == {
        "url": OCI_REPO,
        "type": "oci",
        "interval": "10m",
        "insecure": True,
        "provider": "aws",
        "certSecretRef": {"name": "ca"},
        "timeout": "90s",
    }
    assert "chartRef" not in objects.release["spec"]
    assert objects.release["spec"]["chart"]["spec"] == {
        "chart": "podinfo",
        "version": "6.1.2+build.1",
        "sourceRef": {"kind": "HelmRepository", "name": "podinfo"},
        "interval": "10m",
        "valuesFiles": ["values.yaml", "values-prod.yaml"],
        "ignoreMissingValuesFiles": True,
        "verify": {"provider": "cosign", "secretRef": {"name": "cosign-keys"}},
    }


def test_source_interval_leaves_the_release_interval_alone() -> None:
    objects = build(make_bd(interval="5m", source={"interval": "1h"}))
    assert objects.source["spec"]["interval"] == "1h"
    assert objects.release["spec"]["interval"] == "5m"
    assert objects.release["spec"]["chart"]["spec"]["interval"] == "5m"


def test_remote_mode_passes_the_same_fields() -> None:
    helm: dict[str, Any] = {
        "serviceAccountName": "deployer",
        "source": {"verify": {"provider": "cosign"}},
    }
    objects = build(make_bd(repo=OCI_REPO, **helm), REMOTE)
    assert objects.release["spec"]["serviceAccountName"] == "deployer"
    assert objects.release["spec"]["kubeConfig"]["secretRef"]["key"] == "value"
    assert objects.source["spec"]["verify"] == {"provider": "cosign"}


@pytest.mark.parametrize(
    ("helm", "field", "message"),
    [
        pytest.param(
            {"source": {"verify": {"provider": "cosign"}}},
            "options.helm.source.verify",
            "is a field of an OCIRepository (oci://)",
            id="verify on an https repository",
        ),
        pytest.param(
            {"source": {"provider": "gcp"}},
            "options.helm.source.provider",
            "read through a HelmRepository",
            id="provider on an https repository",
        ),
        pytest.param(
            {"repo": OCI_REPO, "source": {"passCredentials": True}},
            "options.helm.source.passCredentials",
            "is a field of a HelmRepository",
            id="passCredentials on an oci registry",
        ),
        pytest.param(
            {
                "repo": OCI_REPO,
                "valuesFiles": ["values-prod.yaml"],
                "source": {"proxySecretRef": {"name": "proxy"}},
            },
            "options.helm.source.proxySecretRef",
            "read through a HelmRepository of type oci and the HelmRelease's chart template, "
            "which take no proxySecretRef",
            id="valuesFiles on an oci registry with a proxy",
        ),
        pytest.param(
            {
                "repo": OCI_REPO,
                "valuesFiles": ["values-prod.yaml"],
                "source": {"verify": {"matchOIDCIdentity": [{"issuer": "a", "subject": "b"}]}},
            },
            "options.helm.source.verify.matchOIDCIdentity",
            "take only provider and secretRef in verify",
            id="valuesFiles on an oci registry with keyless verification",
        ),
        pytest.param(
            {"repo": OCI_REPO, "ignoreMissingValuesFiles": True},
            "options.helm.ignoreMissingValuesFiles",
            "applies only with valuesFiles",
            id="ignoreMissingValuesFiles without valuesFiles on an oci registry",
        ),
        pytest.param(
            {"install": {"strategy": {"name": "RemediateOnFailure", "retryInterval": "1m"}}},
            "options.helm.install.strategy.retryInterval",
            "RetryOnFailure only, not RemediateOnFailure",
            id="install retryInterval without RetryOnFailure",
        ),
        pytest.param(
            {"upgrade": {"strategy": {"name": "RemediateOnFailure", "retryInterval": "1m"}}},
            "options.helm.upgrade.strategy.retryInterval",
            "RetryOnFailure only",
            id="upgrade retryInterval without RetryOnFailure",
        ),
    ],
)
def test_what_flux_refuses_is_refused(helm: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        build_flux_objects(make_bd(**helm), PULL)
    assert field in str(caught.value)
    assert message in str(caught.value)


def _check(obj: dict[str, Any], expected: dict[str, Any]) -> None:
    for path, value in expected.items():
        if value is MISSING:
            *parents, leaf = path.split(".")
            assert leaf not in dig(obj, ".".join(parents)), path
        else:
            assert dig(obj, path) == value, path
