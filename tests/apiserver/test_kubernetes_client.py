"""The official `kubernetes` client against the test API server: the REST shapes it relies on."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config, dynamic, watch
from kubernetes.client.exceptions import ApiException

from tests.support.apiserver.backends import Backend
from tests.support.apiserver.contract import SPEC_CHANGE

# The client's annotations are partial (models' fields are Optional, some modules untyped): these
# tests drive it untyped, as its users' code does.
kube_config: Any = config
kube_watch: Any = watch
kube_dynamic: Any = dynamic

GROUP, VERSION = "bundler.dev", "v1alpha1"
MERGE_PATCH = "application/merge-patch+json"


Kube = tuple[str, client.ApiClient]


@pytest.fixture
def kube(backend: Backend, ns: str, tmp_path: Path) -> Iterator[Kube]:
    """The test namespace, and a client of the official library from an admin kubeconfig."""
    api_client = kube_config.new_client_from_config(
        str(backend.kubeconfig(tmp_path / "kubeconfig", ns))
    )
    yield ns, api_client
    api_client.close()


def bundle(name: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Bundle",
        "metadata": {"name": name, "labels": {"env": "prod"}},
        "spec": {"helm": {"chart": "podinfo"}},
    }


def test_core_v1_secrets(kube: Kube) -> None:
    ns = kube[0]
    core: Any = client.CoreV1Api(kube[1])
    secret = client.V1Secret(
        metadata=client.V1ObjectMeta(name="creds", labels={"app": "x"}),
        string_data={"value": "kubeconfig"},
    )
    created = core.create_namespaced_secret(ns, secret)
    assert created.data == {"value": "a3ViZWNvbmZpZw=="}
    assert created.metadata.resource_version
    listed = core.list_namespaced_secret(ns, label_selector="app=x")
    assert [s.metadata.name for s in listed.items] == ["creds"]
    assert listed.metadata.resource_version
    patched = core.patch_namespaced_secret(
        "creds", ns, {"metadata": {"labels": {"app": "y"}}}, _content_type=MERGE_PATCH
    )
    assert patched.metadata.labels == {"app": "y"}
    assert core.delete_namespaced_secret("creds", ns)["status"] == "Success"
    with pytest.raises(ApiException) as missing:
        core.read_namespaced_secret("creds", ns)
    assert missing.value.status == 404


def test_custom_objects(kube: Kube) -> None:
    ns = kube[0]
    custom: Any = client.CustomObjectsApi(kube[1])
    created = custom.create_namespaced_custom_object(GROUP, VERSION, ns, "bundles", bundle("a"))
    custom.patch_namespaced_custom_object(GROUP, VERSION, ns, "bundles", "a", SPEC_CHANGE)
    status = custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, ns, "bundles", "a", {"status": {"observedGeneration": 2}}
    )
    assert status["status"] == {"observedGeneration": 2}
    assert status["metadata"]["generation"] == 2
    with pytest.raises(ApiException) as conflict:
        custom.replace_namespaced_custom_object(GROUP, VERSION, ns, "bundles", "a", created)
    assert conflict.value.status == 409
    everywhere = custom.list_cluster_custom_object(
        GROUP, VERSION, "bundles", label_selector="env=prod"
    )
    # Other namespaces may hold such Bundles too (tests share the real server).
    assert [
        o["metadata"]["name"] for o in everywhere["items"] if o["metadata"]["namespace"] == ns
    ] == ["a"]
    custom.delete_namespaced_custom_object(GROUP, VERSION, ns, "bundles", "a")
    with pytest.raises(ApiException) as missing:
        custom.get_namespaced_custom_object(GROUP, VERSION, ns, "bundles", "a")
    assert missing.value.status == 404


def test_watch_stream_tracks_resource_versions(kube: Kube) -> None:
    ns = kube[0]
    custom: Any = client.CustomObjectsApi(kube[1])
    custom.create_namespaced_custom_object(GROUP, VERSION, ns, "bundles", bundle("a"))
    stream = kube_watch.Watch()
    seen: list[tuple[str, str]] = []

    def write_later() -> None:
        custom.patch_namespaced_custom_object(GROUP, VERSION, ns, "bundles", "a", SPEC_CHANGE)

    for event in stream.stream(
        custom.list_namespaced_custom_object, GROUP, VERSION, ns, "bundles", timeout_seconds=30
    ):
        seen.append((event["type"], event["object"]["metadata"]["resourceVersion"]))
        if len(seen) == 1:
            threading.Thread(target=write_later).start()
        else:
            stream.stop()
    assert [t for t, _ in seen] == ["ADDED", "MODIFIED"]
    assert stream.resource_version == seen[-1][1]


@pytest.mark.stand_in_history(1)
def test_watch_from_an_expired_version_raises_410(kube: Kube) -> None:
    core: Any = client.CoreV1Api(kube[1])
    custom: Any = client.CustomObjectsApi(kube[1])
    # resourceVersion 1 is older than any history a server keeps of Bundles: the real one's
    # begins when their CRD was established, the stand-in's (of one change) after these writes.
    for suffix in ("a", "b", "c"):
        name = f"{kube[0]}-{suffix}"
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    with pytest.raises(ApiException) as expired:
        for _ in kube_watch.Watch().stream(
            custom.list_namespaced_custom_object,
            GROUP,
            VERSION,
            kube[0],
            "bundles",
            resource_version="1",
            timeout_seconds=5,
        ):
            pass
    assert expired.value.status == 410


def test_leases_and_rbac(kube: Kube) -> None:
    ns = kube[0]
    leases: Any = client.CoordinationV1Api(kube[1])
    lease = client.V1Lease(
        metadata=client.V1ObjectMeta(name="bundler-manager"),
        spec=client.V1LeaseSpec(holder_identity="one", lease_duration_seconds=15),
    )
    created = leases.create_namespaced_lease(ns, lease)
    created.spec.holder_identity = "two"
    assert (
        leases.replace_namespaced_lease("bundler-manager", ns, created).spec.holder_identity
        == "two"
    )
    rbac: Any = client.RbacAuthorizationV1Api(kube[1])
    role = client.V1Role(
        metadata=client.V1ObjectMeta(name="agent"),
        rules=[
            client.V1PolicyRule(api_groups=[GROUP], resources=["bundledeployments"], verbs=["get"])
        ],
    )
    assert rbac.create_namespaced_role(ns, role).metadata.name == "agent"


def test_dynamic_client_discovers_and_writes(kube: Kube, tmp_path: Path) -> None:
    ns = kube[0]
    dynamic = kube_dynamic.DynamicClient(kube[1], cache_file=str(tmp_path / "discovery.json"))
    bundles = dynamic.resources.get(api_version=f"{GROUP}/{VERSION}", kind="Bundle")
    bundles.create(body=bundle("a"), namespace=ns)
    assert [b.metadata.name for b in bundles.get(namespace=ns).items] == ["a"]
    bundles.status.patch(
        body={"metadata": {"name": "a"}, "status": {"resolvedVersion": "1.0.0"}},
        namespace=ns,
        content_type=MERGE_PATCH,
    )
    assert bundles.get(name="a", namespace=ns).status.resolvedVersion == "1.0.0"
