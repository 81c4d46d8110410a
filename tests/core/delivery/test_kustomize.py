"""KUSTOMIZE: the OCIRepository or GitRepository and the Kustomization a BundleDeployment of
Kustomize manifests becomes (valid against Flux's CRDs), and how the Kustomization is read back."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.core.delivery import ReportReason
from bundler.core.delivery.kustomize import KUSTOMIZE, current, read_kustomization
from bundler.core.flux import FluxTarget
from bundler.errors import InvalidInputError
from tests.support.core.flux.objects import (
    ARTIFACT_REPO,
    PULL,
    REMOTE,
    dig,
    make_bd,
    make_kustomize_bd,
)
from tests.support.schemas import validate

GIT = {"git": {"url": "https://git.example/podinfo.git", "ref": {"tag": "v1.2.0"}}}
CREDENTIALS = FluxTarget(cluster="fleet-default/prod-eu-1", registry_secret="podinfo-credentials")


def _built(target: FluxTarget = PULL, **kustomize: Any) -> dict[str, dict[str, Any]]:
    """The built objects by kind, each valid against Flux's CRD."""
    built = KUSTOMIZE.build(make_kustomize_bd(**kustomize), target)
    for _, obj in built:
        validate(obj)
    return {obj["kind"]: obj for _, obj in built}


@pytest.mark.parametrize(
    ("kustomize", "target", "path", "expected"),
    [
        pytest.param({}, PULL, "OCIRepository.spec.url", ARTIFACT_REPO, id="oci-url"),
        pytest.param({}, PULL, "OCIRepository.spec.ref", {"tag": "1.0.0"}, id="oci-tag"),
        pytest.param(
            {"source": {"oci": {"url": ARTIFACT_REPO, "tag": "1.0.0", "insecure": True}}},
            PULL,
            "OCIRepository.spec.insecure",
            True,
            id="oci-insecure",
        ),
        pytest.param(
            {},
            CREDENTIALS,
            "OCIRepository.spec.secretRef",
            {"name": "podinfo-credentials"},
            id="credentials-copy",
        ),
        pytest.param(
            {"source": GIT}, PULL, "GitRepository.spec.ref", {"tag": "v1.2.0"}, id="git-ref"
        ),
        pytest.param(
            {"source": GIT},
            PULL,
            "Kustomization.spec.sourceRef",
            {"kind": "GitRepository", "name": "podinfo"},
            id="git-source-ref",
        ),
        pytest.param({}, PULL, "Kustomization.spec.path", "./", id="path-default-root"),
        pytest.param({"path": "./prod"}, PULL, "Kustomization.spec.path", "./prod", id="path"),
        pytest.param({}, PULL, "Kustomization.spec.prune", True, id="prune-default-true"),
        pytest.param({"prune": False}, PULL, "Kustomization.spec.prune", False, id="prune-off"),
        pytest.param(
            {},
            PULL,
            "Kustomization.spec.targetNamespace",
            "podinfo",
            id="target-namespace-is-the-options-namespace",
        ),
        pytest.param(
            {"targetNamespace": "web"},
            PULL,
            "Kustomization.spec.targetNamespace",
            "web",
            id="target-namespace",
        ),
        pytest.param(
            {"wait": True, "timeout": "3m"}, PULL, "Kustomization.spec.timeout", "3m", id="timeout"
        ),
        pytest.param(
            {"postBuild": {"substitute": {"cluster_name": "prod-eu-1"}}},
            PULL,
            "Kustomization.spec.postBuild",
            {"substitute": {"cluster_name": "prod-eu-1"}},
            id="substitute",
        ),
        pytest.param(
            {"patches": [{"patch": "- op: remove\n  path: /x\n", "target": {"kind": "Service"}}]},
            PULL,
            "Kustomization.spec.patches",
            [{"patch": "- op: remove\n  path: /x\n", "target": {"kind": "Service"}}],
            id="patches",
        ),
        pytest.param(
            {"components": ["../c"]},
            PULL,
            "Kustomization.spec.components",
            ["../c"],
            id="components",
        ),
        pytest.param(
            {},
            REMOTE,
            "Kustomization.spec.kubeConfig",
            {"secretRef": {"name": "prod-eu-1-kubeconfig", "key": "value"}},
            id="remote-kubeconfig",
        ),
        pytest.param(
            {}, REMOTE, "Kustomization.metadata.namespace", REMOTE.namespace, id="remote-ns"
        ),
    ],
)
def test_a_bundle_deployment_becomes_a_source_and_a_kustomization(
    kustomize: dict[str, Any], target: FluxTarget, path: str, expected: Any
) -> None:
    kind, _, rest = path.partition(".")
    assert dig(_built(target, **kustomize)[kind], rest) == expected


def test_the_kustomization_carries_the_deployment_id_and_bundlers_labels() -> None:
    built = _built()
    meta = built["Kustomization"]["metadata"]
    assert meta["annotations"]["bundler.dev/deployment-id"] == "s-0123abcd"
    assert meta["labels"] == built["OCIRepository"]["metadata"]["labels"]
    assert meta["labels"]["bundler.dev/bundledeployment"] == "podinfo"


@pytest.mark.parametrize(
    ("bd", "target", "field", "message"),
    [
        pytest.param(
            make_kustomize_bd(source={"oci": {"url": ARTIFACT_REPO, "version": "1.*"}}),
            PULL,
            "spec.options.kustomize.source.oci.tag",
            "the manager resolves versions to tags",
            id="unresolved-range",
        ),
        pytest.param(make_bd(), PULL, "spec.options.kustomize", "deploys a Helm chart", id="helm"),
        pytest.param(
            make_kustomize_bd(),
            FluxTarget(cluster="ws/c", mode=REMOTE.mode, namespace="ns"),
            None,
            "needs the cluster's kubeconfig Secret",
            id="remote-without-kubeconfig",
        ),
    ],
)
def test_options_that_cannot_become_objects_name_the_field(
    bd: Any, target: FluxTarget, field: str | None, message: str
) -> None:
    with pytest.raises(InvalidInputError) as err:
        KUSTOMIZE.build(bd, target)
    assert err.value.field == field
    assert message in err.value.message


def _kustomization(
    *,
    generation: int = 2,
    observed: int | None = 2,
    ready: str | None = "True",
    reason: str = "ReconciliationSucceeded",
    message: str = "Applied revision: 1.0.0@sha256:abc",
    applied: str | None = "1.0.0@sha256:abc",
    **meta: Any,
) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if observed is not None:
        status["observedGeneration"] = observed
    if ready is not None:
        status["conditions"] = [
            {"type": "Ready", "status": ready, "reason": reason, "message": message}
        ]
    if applied is not None:
        status["lastAppliedRevision"] = applied
    return {
        "metadata": {
            "name": "podinfo",
            "namespace": "bundler-system",
            "generation": generation,
            **meta,
        },
        "spec": {},
        "status": status,
    }


@pytest.mark.parametrize(
    ("live", "ready", "reason"),
    [
        pytest.param(None, False, ReportReason.NOT_DEPLOYED, id="absent"),
        pytest.param(_kustomization(), True, "ReconciliationSucceeded", id="ready"),
        pytest.param(
            _kustomization(observed=1), False, ReportReason.PROGRESSING, id="old-generation"
        ),
        pytest.param(
            _kustomization(
                ready="False",
                reason="HealthCheckFailed",
                message="timeout waiting for: [Deployment/podinfo/web status: 'InProgress']",
            ),
            False,
            "HealthCheckFailed",
            id="flux-failure",
        ),
        pytest.param(
            _kustomization(deletionTimestamp="2026-01-01T00:00:00Z"),
            False,
            ReportReason.UNINSTALLING,
            id="being-deleted",
        ),
    ],
)
def test_readiness_is_read_from_the_kustomization(
    live: dict[str, Any] | None, ready: bool, reason: str
) -> None:
    report = read_kustomization(live)
    assert (report.ready, report.reason) == (ready, reason)


def test_a_failed_health_check_names_the_objects_that_are_not_ready() -> None:
    message = (
        "health check failed: timeout waiting for: [Deployment/podinfo/web status: 'InProgress']"
    )
    report = read_kustomization(
        _kustomization(ready="False", reason="HealthCheckFailed", message=message)
    )
    assert [(o.kind, o.namespace, o.name, o.status) for o in report.objects] == [
        ("Deployment", "podinfo", "web", "InProgress")
    ]


@pytest.mark.parametrize(
    ("kustomize", "applied", "ready"),
    [
        pytest.param({}, "1.0.0@sha256:abc", True, id="tag-applied"),
        pytest.param({}, "0.9.0@sha256:abc", False, id="older-tag-still-applied"),
        pytest.param({"source": GIT}, "v1.2.0@sha1:0123", True, id="git-tag-applied"),
        pytest.param(
            {"source": {"git": {"url": "https://g/r.git", "ref": {"commit": "0123"}}}},
            "main@sha1:0123",
            True,
            id="git-commit-is-fluxs-to-check",
        ),
    ],
)
def test_ready_waits_for_the_revision_the_options_name(
    kustomize: dict[str, Any], applied: str, ready: bool
) -> None:
    options = make_kustomize_bd(**kustomize).spec.options
    report = current(read_kustomization(_kustomization(applied=applied)), options)
    assert report.ready is ready
    assert report.release is not None and report.release.appliedRevision == applied
