"""Writes of Flux's kinds ask for strict field validation: against a cluster whose HelmRelease CRD
is older than a field bundler writes, the write is refused, naming the field (the server's default
would drop it silently and Flux would never see it)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from bundler.api.resources import CUSTOM_RESOURCE_DEFINITION, HELM_RELEASE
from bundler.apiserver import ApiServer
from bundler.core.flux.requirements import unknown_field_hint
from bundler.kube.store import KubeStore
from bundler.store.errors import Invalid
from tests.support.schemas import SCHEMAS_DIR

NEW_FIELD = "postRenderStrategy"


def _older_helm_release_crd() -> dict[str, Any]:
    """helm-controller's HelmRelease CRD without a field it added in v1.6.0."""
    crd: dict[str, Any] = yaml.safe_load((SCHEMAS_DIR / "flux" / "helmreleases.yaml").read_text())
    (version,) = crd["spec"]["versions"]
    del version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][NEW_FIELD]
    return crd


def _release(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": HELM_RELEASE.api_version,
        "kind": "HelmRelease",
        "metadata": {"name": "app", "namespace": "ws"},
        "spec": {"interval": "10m", "chartRef": {"kind": "OCIRepository", "name": "app"}, **spec},
    }


@pytest.fixture
def old_flux(server: ApiServer, connect: Any) -> KubeStore:
    server.add_resource(CUSTOM_RESOURCE_DEFINITION)
    server.add_resource(HELM_RELEASE)
    store: KubeStore = connect()
    store.create(CUSTOM_RESOURCE_DEFINITION, _older_helm_release_crd())
    return store


def test_a_field_the_crd_lacks_refuses_the_write_and_says_which_flux(old_flux: KubeStore) -> None:
    with pytest.raises(Invalid) as refused:
        old_flux.create(HELM_RELEASE, _release(postRenderStrategy="nohooks"))
    message = str(refused.value)
    assert f'unknown field "spec.{NEW_FIELD}"' in message
    hint = unknown_field_hint(message)
    assert hint is not None and "helm-controller v1.6.0 (Flux v2.9.0)" in hint


def test_an_update_adding_the_field_is_refused_too(old_flux: KubeStore) -> None:
    created = old_flux.create(HELM_RELEASE, _release())
    created["spec"][NEW_FIELD] = "nohooks"
    with pytest.raises(Invalid, match=f'unknown field "spec.{NEW_FIELD}"'):
        old_flux.update(HELM_RELEASE, created)
    with pytest.raises(Invalid, match=f'unknown field "spec.{NEW_FIELD}"'):
        old_flux.patch(HELM_RELEASE, "app", {"spec": {NEW_FIELD: "nohooks"}}, "ws")


def test_fields_the_crd_has_are_written(old_flux: KubeStore) -> None:
    written = old_flux.create(HELM_RELEASE, _release(suspend=True))
    assert written["spec"]["suspend"] is True
