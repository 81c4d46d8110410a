"""What kubectl reads besides the objects: the OpenAPI v3 documents (the kinds' schemas for `kubectl
explain`, fieldValidation on every PATCH so kubectl lets the server validate) and the short names
and categories in discovery."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.apiserver.backends import ROOT, Backend
from tests.support.apiserver.contract import Http
from tests.support.e2e.tools import tools_root
from tests.support.kubectl import find_kubectl

BUNDLER_DOCUMENT = "apis/bundler.dev/v1alpha1"
BUNDLE_SCHEMA = "dev.bundler.v1alpha1.Bundle"


def crd_schema(plural: str) -> Any:
    crd = yaml.safe_load((ROOT / "crds" / f"bundler.dev_{plural}.yaml").read_text())
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def document(api: Http, group_version: str) -> dict[str, Any]:
    """A group-version's document, fetched at the URL the root gives for it."""
    code, root = api.call("GET", "/openapi/v3")
    assert code == 200
    url = root["paths"][group_version]["serverRelativeURL"]
    code, found = api.call("GET", url)
    assert code == 200
    return found


def test_the_root_lists_every_group_version_with_a_hash_of_its_document(api: Http) -> None:
    code, root = api.call("GET", "/openapi/v3")
    assert code == 200
    assert "api/v1" in root["paths"]
    url = root["paths"][BUNDLER_DOCUMENT]["serverRelativeURL"]
    assert re.fullmatch(r"/openapi/v3/apis/bundler\.dev/v1alpha1\?hash=[0-9A-F]{128}", url)


@pytest.mark.parametrize(
    ("group_version", "path", "kind"),
    [
        (
            BUNDLER_DOCUMENT,
            "/apis/bundler.dev/v1alpha1/namespaces/{namespace}/bundles/{name}",
            "Bundle",
        ),
        ("api/v1", "/api/v1/namespaces/{name}", "Namespace"),
    ],
    ids=["namespaced-crd", "cluster-scoped-built-in"],
)
def test_every_patch_operation_takes_field_validation(
    api: Http, group_version: str, path: str, kind: str
) -> None:
    patch = document(api, group_version)["paths"][path]["patch"]
    assert patch["x-kubernetes-group-version-kind"]["kind"] == kind
    queried = [p["name"] for p in patch["parameters"] if p["in"] == "query"]
    assert "fieldValidation" in queried


def test_a_bundler_kind_is_published_with_its_crds_schema(api: Http) -> None:
    schemas = document(api, BUNDLER_DOCUMENT)["components"]["schemas"]
    bundle = schemas[BUNDLE_SCHEMA]
    source = crd_schema("bundles")
    assert bundle["x-kubernetes-group-version-kind"] == [
        {"group": "bundler.dev", "kind": "Bundle", "version": "v1alpha1"}
    ]
    assert (bundle["description"], bundle["required"]) == (source["description"], ["spec"])
    assert bundle["properties"]["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    ]
    targets = bundle["properties"]["spec"]["properties"]["targets"]
    assert targets == source["properties"]["spec"]["properties"]["targets"]
    # int-or-string is published with the anyOf that says so to OpenAPI clients.
    rollout = bundle["properties"]["spec"]["properties"]["rolloutStrategy"]["properties"]
    assert rollout["maxUnavailable"]["anyOf"] == [{"type": "integer"}, {"type": "string"}]
    assert schemas[f"{BUNDLE_SCHEMA}List"]["properties"]["items"]["items"] == {
        "$ref": f"#/components/schemas/{BUNDLE_SCHEMA}"
    }
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas


@pytest.mark.parametrize(
    "path",
    [
        "/openapi/v3/apis/nowhere/v1",
        pytest.param(
            "/openapi/v2",
            marks=pytest.mark.deliberate_difference(
                "the stand-in serves OpenAPI v3 only, which every kubectl it is used with reads"
            ),
        ),
    ],
    ids=["unknown-group", "v2"],
)
def test_other_openapi_paths_are_not_found(api: Http, path: str) -> None:
    assert api.send("GET", path).status_code == 404


def test_the_openapi_documents_need_authentication(backend: Backend) -> None:
    client = backend.client("not-a-token")
    assert client.call("GET", "/openapi/v3")[0] == 401
    client.close()


# The kubectl of the tests (tests.support.kubectl: the venv's, from the test extra) and the one
# `make e2e-tools` built.
KUBECTLS = [
    pytest.param(find_kubectl()[0], id="kubectl-of-the-tests"),
    pytest.param(str(tools_root() / "bin" / "kubectl"), id="kubectl-built"),
]


@pytest.mark.parametrize("kubectl", KUBECTLS)
def test_kubectl_explains_a_bundler_field(
    backend: Backend, ns: str, tmp_path: Path, kubectl: str | None
) -> None:
    if kubectl is None or not Path(kubectl).is_file():
        pytest.skip(f"no such kubectl: {kubectl}")
    done = subprocess.run(
        [kubectl, f"--kubeconfig={backend.kubeconfig(tmp_path / 'kubeconfig', ns)}", "explain",
         "bundles.spec.targets", "--api-version=bundler.dev/v1alpha1"],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "GROUP:      bundler.dev\nKIND:       Bundle\nVERSION:    v1alpha1\n\n"
        "FIELD: targets <[]Object>\n"
    )
    items = crd_schema("bundles")["properties"]["spec"]["properties"]["targets"]["items"]
    fields = re.findall(r"^  (\w+)\t<", done.stdout, flags=re.MULTILINE)
    assert fields == sorted(items["properties"])
    first_line = items["properties"]["clusterName"]["description"]
    assert f"  clusterName\t<string>\n    {first_line}" in done.stdout


@pytest.mark.parametrize(
    ("group_version", "plural", "names"),
    [
        (
            "apis/bundler.dev/v1alpha1",
            "bundles",
            {"shortNames": ["bdl"], "categories": ["bundler"]},
        ),
        (
            "apis/bundler.dev/v1alpha1",
            "clusters",
            {"shortNames": ["bcl"], "categories": ["bundler"]},
        ),
        ("api/v1", "namespaces", {"shortNames": ["ns"]}),
        ("api/v1", "secrets", {}),
    ],
    ids=["bundle", "cluster", "namespace", "secret-has-none"],
)
def test_discovery_carries_short_names_and_categories(
    api: Http, group_version: str, plural: str, names: dict[str, list[str]]
) -> None:
    _, listed = api.call("GET", f"/{group_version}")
    (found,) = [r for r in listed["resources"] if r["name"] == plural]
    assert {k: found[k] for k in ("shortNames", "categories") if k in found} == names
