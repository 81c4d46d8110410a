"""The GitOps example (docs/gitops/): Flux's objects valid against Flux's own CRDs, the RBAC
against Kubernetes', and wired together: the Kustomization reads the GitRepository and applies
into its workspace as the ServiceAccount the Role limits to bundler's kinds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from bundler.api.resources import BUNDLER_KINDS
from tests.support.schemas import validate

GITOPS = Path(__file__).resolve().parents[2] / "docs" / "gitops"
KUBERNETES_VERSION = "1.37.0"


def _objects() -> dict[str, dict[str, Any]]:
    found = {}
    for path in sorted(GITOPS.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            found[doc["kind"]] = doc
    return found


OBJECTS = _objects()


@pytest.mark.parametrize("kind", ["GitRepository", "Kustomization"])
def test_flux_objects_are_valid_against_fluxs_crds(kind: str) -> None:
    validate(OBJECTS[kind])


@pytest.mark.parametrize("kind", ["ServiceAccount", "Role", "RoleBinding"])
def test_rbac_objects_are_valid_kubernetes(kind: str) -> None:
    kubernetes_validate.validate(OBJECTS[kind], KUBERNETES_VERSION, strict=True)


def test_kustomization_applies_the_repository_into_its_workspace_as_the_limited_account() -> None:
    source, kustomization = OBJECTS["GitRepository"], OBJECTS["Kustomization"]
    spec = kustomization["spec"]
    assert spec["sourceRef"] == {
        "kind": "GitRepository",
        "name": source["metadata"]["name"],
        "namespace": source["metadata"]["namespace"],
    }
    workspace = kustomization["metadata"]["namespace"]
    assert spec["targetNamespace"] == workspace
    assert spec["prune"] is True
    account = OBJECTS["ServiceAccount"]["metadata"]
    assert (spec["serviceAccountName"], workspace) == (account["name"], account["namespace"])
    binding = OBJECTS["RoleBinding"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", **account}]
    assert binding["roleRef"]["name"] == OBJECTS["Role"]["metadata"]["name"]


def test_role_allows_exactly_the_kinds_users_write() -> None:
    (rule,) = OBJECTS["Role"]["rules"]
    written = {k.plural for k in BUNDLER_KINDS if k.kind != "BundleDeployment"}
    assert rule["apiGroups"] == ["bundler.dev"]
    assert set(rule["resources"]) == written
