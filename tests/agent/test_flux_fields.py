"""Flux fields end to end over HTTP, against downstream API servers that serve Flux's real CRDs
(helm-controller v1.6.2, source-controller v1.9.1): a Bundle using the newer fields is accepted
by a current Flux and reaches Ready, while a cluster whose Flux is older than a field refuses the
write and the BundleDeployment says which Flux the Bundle needs (FluxTooOld), until the Bundle
leaves the field out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.api.resources import BUNDLE, CUSTOM_RESOURCE_DEFINITION, HELM_RELEASE
from bundler.apiserver import ApiServer
from tests.support.agent.http_fleet import AGENT_NAMESPACE, HttpFleet, eventually
from tests.support.builders import bundle
from tests.support.schemas import SCHEMAS_DIR, validate

FLUX_CRDS = ("helmreleases.yaml", "helmrepositories.yaml", "ocirepositories.yaml")
NEWER_FIELDS: dict[str, Any] = {
    "install": {
        "strategy": {"name": "RetryOnFailure", "retryInterval": "1m"},
        "createNamespace": False,
    },
    "upgrade": {"chartNameChangeStrategy": "InPlaceUpdate", "serverSideApply": "enabled"},
    "postRenderStrategy": "nohooks",
    "postRenderers": [{"kustomize": {"patches": [{"patch": "data:\n  c: ${ cluster.name }\n"}]}}],
    "commonMetadata": {"labels": {"team": "${ cluster.name }"}},
    "serviceAccountName": "deployer",
    "storageNamespace": "helm-records",
}


def _install_flux_crds(server: ApiServer, *, without: str | None = None) -> None:
    """Flux's CRDs as the test schemas have them; `without`: a spec field of HelmRelease left
    out, as an older helm-controller's CRD has it."""
    server.add_resource(CUSTOM_RESOURCE_DEFINITION)
    for name in FLUX_CRDS:
        crd = yaml.safe_load((SCHEMAS_DIR / "flux" / name).read_text())
        if without is not None and crd["spec"]["names"]["kind"] == "HelmRelease":
            (version,) = crd["spec"]["versions"]
            del version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][without]
        server.store.create(CUSTOM_RESOURCE_DEFINITION, crd)


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[HttpFleet]:
    built = HttpFleet(tmp_path)
    yield built
    built.stop()


def _app(**helm: Any) -> dict[str, Any]:
    return bundle([{"clusterSelector": {}}], name="app", helm=helm, namespace="apps").to_wire()


def _deployed(fleet: HttpFleet) -> dict[str, Any]:
    """The Deployed condition of the one BundleDeployment ({} until there is one)."""
    found = fleet.bundle_deployments()
    conditions = (found[0].get("status") or {}).get("conditions") or [] if found else []
    return next((c for c in conditions if c["type"] == "Deployed"), {})


def test_a_current_flux_takes_every_newer_field(fleet: HttpFleet) -> None:
    edge = fleet.add_cluster("edge")
    _install_flux_crds(edge.server)
    fleet.start()
    fleet.put(BUNDLE, _app(**NEWER_FIELDS))
    eventually(lambda: fleet.ready_clusters("app") == "1/1", "the bundle to be Ready")
    release = edge.server.store.get(HELM_RELEASE, "app", AGENT_NAMESPACE)
    validate(release)
    spec = release["spec"]
    assert spec["postRenderers"][0]["kustomize"]["patches"][0]["patch"] == "data:\n  c: edge\n"
    assert spec["commonMetadata"] == {"labels": {"team": "edge"}}
    assert spec["install"]["createNamespace"] is False
    assert (spec["serviceAccountName"], spec["storageNamespace"]) == ("deployer", "helm-records")


def test_a_field_older_flux_lacks_is_reported_until_it_is_left_out(fleet: HttpFleet) -> None:
    edge = fleet.add_cluster("edge")
    _install_flux_crds(edge.server, without="postRenderStrategy")
    fleet.start()
    fleet.put(BUNDLE, _app(postRenderStrategy="nohooks"))

    eventually(lambda: _deployed(fleet).get("reason") == "FluxTooOld", "Deployed=False FluxTooOld")
    message = _deployed(fleet)["message"]
    assert "spec.postRenderStrategy is served from helm-controller v1.6.0 (Flux v2.9.0)" in message
    assert 'unknown field "spec.postRenderStrategy"' in message
    eventually(
        lambda: any(
            "FluxTooOld" in entry.get("message", "") or entry.get("state") == "ErrApplied"
            for entry in fleet.bundle_status("app").get("nonReady") or []
        ),
        "the Bundle to show the cluster as not ready",
    )

    fleet.put(BUNDLE, _app())
    eventually(lambda: fleet.ready_clusters("app") == "1/1", "Ready without the field")
