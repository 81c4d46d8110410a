"""Flux's own fields, passed through by bundler, on the real helm-controller and source-controller.

1. Post-renderers templated per cluster, commonMetadata, storageNamespace and the RetryOnFailure
   strategies: two clusters' released objects carry their own patches; a failed upgrade is tried
   again by Flux instead of remediated.
2. Flux's multi-tenancy lockdown: with `serviceAccountName`, helm-controller applies the release
   as that ServiceAccount, and the real API server refuses what its RBAC does not allow; the
   refusal reaches the BundleDeployment and the Bundle, and an allowed release installs.
3. OCIRepository `provider` and `verify` (cosign, a public key): an unsigned chart is refused by
   source-controller with its message on the Bundle; once signed with the key, it installs.
4. Strict writes: the real API server refuses a field its (older) Flux CRD lacks, in words
   bundler turns into which Flux serves it.
5. Values files inside an oci:// chart (read through a HelmRepository of type oci and a
   HelmChart): merged in order in place of values.yaml, the Bundle's values over them.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
import yaml

from bundler.api.resources import Resource
from bundler.core.flux.requirements import unknown_field_hint
from bundler.kube.store import KubeStore
from bundler.store.errors import Invalid
from tests.support.e2e.charts import CHART
from tests.support.e2e.cosign import generate_key, sign
from tests.support.e2e.processes import wait_until
from tests.support.e2e.releases import helm_records, latest_record
from tests.support.e2e.tenancy import Tenancy

CLUSTERS = {"edge-1": {"region": "eu"}, "edge-2": {"region": "us"}}
PATIENCE = 180.0

# A strategic merge patch and a JSON 6902 patch, templated per cluster.
CONFIGMAP_PATCH = """apiVersion: v1
kind: ConfigMap
metadata:
  name: app-values
  annotations:
    example.com/patched: "true"
data:
  cluster: ${ cluster.name }
  region: ${ cluster.labels.region }
"""
SERVICE_PATCH = """- op: add
  path: /metadata/annotations
  value:
    example.com/cluster: ${ cluster.name }
"""


def _eventually(tenancy: Tenancy, condition: Any, what: str, detail: Any = None) -> Any:
    return wait_until(
        condition, what, timeout=PATIENCE, supervisor=tenancy.env.supervisor, detail=detail
    )


def _non_ready(tenancy: Tenancy, bundle: str) -> list[dict[str, Any]]:
    found = tenancy.bundle(bundle) or {}
    entries: list[dict[str, Any]] = (found.get("status") or {}).get("nonReady") or []
    return entries


def _bd_ready_condition(tenancy: Tenancy, cluster: str, bundle: str) -> dict[str, Any]:
    for bd in tenancy.bundle_deployments(cluster):
        if bd["metadata"]["labels"].get("bundler.dev/bundle-name") == bundle:
            conditions = (bd.get("status") or {}).get("conditions") or []
            return next((c for c in conditions if c["type"] == "Ready"), {})
    return {}


@pytest.mark.timeout(900)
def test_post_renderers_templated_per_cluster_and_retry_strategies(tenancy: Tenancy) -> None:
    tenancy.publish("1.0.0")
    records = f"records-{tenancy.workspace}"
    for cluster, labels in CLUSTERS.items():
        tenancy.env.downstream[cluster].kubectl("create", "namespace", records)
        tenancy.register(cluster, labels)
    tenancy.start_manager()
    for cluster in CLUSTERS:
        tenancy.start_pull_agent(cluster)
    retry = {"name": "RetryOnFailure", "retryInterval": "5s"}
    helm: dict[str, Any] = {
        "version": "1.0.0",
        "install": {"strategy": retry},
        "upgrade": {"strategy": retry},
        "storageNamespace": records,
        "commonMetadata": {"labels": {"example.com/region": "${ cluster.labels.region }"}},
        "postRenderStrategy": "nohooks",
        "postRenderers": [
            {
                "kustomize": {
                    "patches": [
                        {
                            "target": {"kind": "ConfigMap", "name": "app-values"},
                            "patch": CONFIGMAP_PATCH,
                        },
                        {"target": {"kind": "Service", "name": "app"}, "patch": SERVICE_PATCH},
                    ]
                }
            }
        ],
    }
    # edge-2's own target adds a label: maps of a target merge into the Bundle's.
    targets = [
        {
            "name": "edge-2",
            "clusterName": "edge-2",
            "helm": {"commonMetadata": {"labels": {"example.com/target": "edge-2"}}},
        },
        {"name": "others", "clusterSelector": {}},
    ]
    rollout = {"maxUnavailable": "100%"}
    bundle = tenancy.app_bundle("app", helm, targets=targets, rolloutStrategy=rollout)
    tenancy.apply(bundle)
    _eventually(tenancy, lambda: tenancy.ready_clusters("app") == "2/2", "Bundle app READY 2/2")

    namespace = tenancy.release_namespace
    for cluster, labels in CLUSTERS.items():
        downstream = tenancy.env.downstream[cluster]
        configmap = downstream.get("configmap", "app-values", namespace)
        assert configmap is not None
        assert configmap["data"]["cluster"] == cluster
        assert configmap["data"]["region"] == labels["region"]
        assert configmap["metadata"]["annotations"]["example.com/patched"] == "true"
        service = downstream.get("service", "app", namespace)
        assert service is not None
        assert service["metadata"]["annotations"]["example.com/cluster"] == cluster
        for obj in (configmap, service):
            assert obj["metadata"]["labels"]["example.com/region"] == labels["region"]
            target_label = obj["metadata"]["labels"].get("example.com/target")
            assert target_label == ("edge-2" if cluster == "edge-2" else None)
        # Helm's records are in the storage namespace the Bundle named, not beside the release.
        record = latest_record(downstream, "app", records)
        assert record is not None and (record.version, record.status) == ("1.0.0", "deployed")
        assert helm_records(downstream, "app", namespace) == []
        release = downstream.get(
            "helmreleases.helm.toolkit.fluxcd.io", "app", tenancy.agent_namespace
        )
        assert release is not None
        spec = release["spec"]
        assert spec["install"]["strategy"] == retry and spec["upgrade"]["strategy"] == retry
        assert spec["postRenderStrategy"] == "nohooks"
        rendered = yaml.safe_load(spec["postRenderers"][0]["kustomize"]["patches"][0]["patch"])
        assert rendered["data"] == {"cluster": cluster, "region": labels["region"]}

    # A failing upgrade under RetryOnFailure: no remediation, Flux tries the upgrade again every
    # retryInterval (under Flux's default strategy, a failed upgrade without retries stays as it
    # is until the spec changes), and the failure reaches the Bundle.
    tenancy.publish("2.0.0", broken=True)
    tenancy.apply(tenancy.app_bundle("app", {**helm, "version": "2.0.0"}, targets=targets))

    def failed_twice(cluster: str) -> bool:
        found = helm_records(tenancy.env.downstream[cluster], "app", records)
        return len([r for r in found if r.version == "2.0.0" and r.status == "failed"]) >= 2

    _eventually(
        tenancy,
        lambda: all(failed_twice(c) for c in CLUSTERS),
        "Flux to try the failed upgrade again on both clusters",
        lambda: {
            c: [
                (r.revision, r.version, r.status)
                for r in helm_records(tenancy.env.downstream[c], "app", records)
            ]
            for c in CLUSTERS
        },
    )
    for cluster in CLUSTERS:
        found = helm_records(tenancy.env.downstream[cluster], "app", records)
        assert all(r.version == "2.0.0" for r in found if r.revision > 1), "no rollback"
    _eventually(
        tenancy,
        lambda: (
            len(_non_ready(tenancy, "app")) == 2
            and all("Broken_app" in e["message"] for e in _non_ready(tenancy, "app"))
        ),
        "the failure on the Bundle's nonReady",
        lambda: _non_ready(tenancy, "app"),
    )


@pytest.mark.timeout(600)
def test_service_account_lockdown_refuses_what_the_account_may_not_do(tenancy: Tenancy) -> None:
    tenancy.publish("1.0.0")
    edge = tenancy.env.downstream["edge-1"]
    allowed, refused = f"team-a-{tenancy.workspace}", f"team-b-{tenancy.workspace}"
    account = "deployer"
    agent_namespace = tenancy.agent_namespace
    for namespace in (agent_namespace, allowed, refused):
        edge.kubectl("create", "namespace", namespace)
    user = f"system:serviceaccount:{agent_namespace}:{account}"
    # The platform's side of the lockdown: the account, in the HelmRelease's namespace, may
    # manage what the chart holds in team-a; in team-b only Helm's records (Secrets).
    edge.apply(
        [
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": account, "namespace": agent_namespace},
            },
            *_role_and_binding(
                allowed, ["configmaps", "secrets", "services"], account, agent_namespace
            ),
            *_role_and_binding(refused, ["secrets"], account, agent_namespace),
        ]
    )
    tenancy.register("edge-1", {"env": "e2e"})
    tenancy.start_manager()
    tenancy.start_pull_agent("edge-1")
    locked = {
        "version": "1.0.0",
        "serviceAccountName": account,
        "install": {"createNamespace": False},
    }
    tenancy.apply(
        tenancy.app_bundle("allowed", locked, namespace=allowed),
        tenancy.app_bundle("refused", locked, namespace=refused),
    )

    _eventually(tenancy, lambda: tenancy.ready_clusters("allowed") == "1/1", "allowed READY 1/1")
    record = latest_record(edge, "allowed", allowed)
    assert record is not None and record.status == "deployed"
    assert edge.get("configmap", "allowed-values", allowed) is not None

    # Flux tries the install again (nothing was recorded), so the state comes and goes: each
    # look is taken when it holds.
    def refusal() -> str:
        entries = _non_ready(tenancy, "refused")
        return entries[0]["message"] if entries else ""

    def refused_on_the_bundle() -> str:
        message = refusal()
        return message if "forbidden" in message and user in message else ""

    message = _eventually(
        tenancy,
        refused_on_the_bundle,
        "the API server's refusal of the account on the Bundle",
        refusal,
    )
    assert f'configmaps "refused-values" is forbidden: User "{user}"' in message

    def refused_on_the_deployment() -> dict[str, Any]:
        ready = _bd_ready_condition(tenancy, "edge-1", "refused")
        return ready if ready.get("status") == "False" and user in ready["message"] else {}

    ready = _eventually(tenancy, refused_on_the_deployment, "the refusal on the BundleDeployment")
    assert ready["reason"] == "InstallFailed", ready
    assert edge.get("configmap", "refused-values", refused) is None
    assert tenancy.ready_clusters("refused") == "0/1"


def _role_and_binding(
    namespace: str, resources: list[str], account: str, account_namespace: str
) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "deployer", "namespace": namespace},
            "rules": [{"apiGroups": [""], "resources": resources, "verbs": ["*"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "deployer", "namespace": namespace},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "deployer",
            },
            "subjects": [
                {"kind": "ServiceAccount", "name": account, "namespace": account_namespace}
            ],
        },
    ]


@pytest.mark.timeout(600)
def test_oci_verify_refuses_an_unsigned_chart_until_it_is_signed(tenancy: Tenancy) -> None:
    tenancy.publish("1.0.0")
    edge = tenancy.env.downstream["edge-1"]
    key = generate_key(tenancy.workdir / "cosign")
    edge.kubectl("create", "namespace", tenancy.agent_namespace)
    edge.apply(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "cosign-keys", "namespace": tenancy.agent_namespace},
            "data": {"cosign.pub": base64.b64encode(key.public_pem.encode()).decode()},
        }
    )
    tenancy.register("edge-1", {"env": "e2e"})
    tenancy.start_manager()
    tenancy.start_pull_agent("edge-1")
    source = {
        "provider": "generic",
        "verify": {"provider": "cosign", "secretRef": {"name": "cosign-keys"}},
        "interval": "5s",
    }
    tenancy.apply(tenancy.app_bundle("app", {"version": "1.0.0", "source": source}))

    def oci_repository() -> dict[str, Any]:
        found = edge.get("ocirepositories.source.toolkit.fluxcd.io", "app", tenancy.agent_namespace)
        return found or {}

    def verified() -> dict[str, Any]:
        conditions = (oci_repository().get("status") or {}).get("conditions") or []
        return next((c for c in conditions if c["type"] == "SourceVerified"), {})

    _eventually(
        tenancy,
        lambda: verified().get("status") == "False",
        "source-controller to refuse the unsigned chart",
        verified,
    )
    assert verified()["reason"] == "VerificationError"
    assert "no matching signatures were found" in verified()["message"]
    spec = oci_repository()["spec"]
    assert spec["provider"] == "generic"
    assert spec["verify"] == {"provider": "cosign", "secretRef": {"name": "cosign-keys"}}

    def on_the_bundle() -> str:
        entries = _non_ready(tenancy, "app")
        return entries[0]["message"] if entries else ""

    _eventually(
        tenancy,
        lambda: "no matching signatures were found" in on_the_bundle(),
        "source-controller's message on the Bundle",
        on_the_bundle,
    )
    assert latest_record(edge, "app", tenancy.release_namespace) is None

    registry = tenancy.env.registry.host
    sign(registry, f"{tenancy.workspace}/{CHART}", "1.0.0", key)
    _eventually(
        tenancy,
        lambda: verified().get("status") == "True",
        "the signed chart to verify",
        verified,
    )
    _eventually(tenancy, lambda: tenancy.ready_clusters("app") == "1/1", "Bundle app READY 1/1")
    record = latest_record(edge, "app", tenancy.release_namespace)
    assert record is not None and record.status == "deployed"


@pytest.mark.timeout(600)
def test_values_files_of_an_oci_chart_are_merged_before_the_values(tenancy: Tenancy) -> None:
    tenancy.publish("1.0.0", extra={"values-prod.yaml": "size: large\ntier: {level: 2}\n"})
    tenancy.register("edge-1", {"env": "e2e"})
    tenancy.start_manager()
    tenancy.start_pull_agent("edge-1")
    helm = {
        "version": "1.0.0",
        "valuesFiles": ["values.yaml", "values-prod.yaml", "values-absent.yaml"],
        "ignoreMissingValuesFiles": True,
        "values": {"tier": {"cluster": "${ cluster.name }"}},
    }
    tenancy.apply(tenancy.app_bundle("app", helm))
    _eventually(tenancy, lambda: tenancy.ready_clusters("app") == "1/1", "Bundle app READY 1/1")
    edge = tenancy.env.downstream["edge-1"]
    source = edge.get("helmrepositories.source.toolkit.fluxcd.io", "app", tenancy.agent_namespace)
    assert source is not None and source["spec"]["type"] == "oci"
    released = edge.get("configmap", "app-values", tenancy.release_namespace)
    assert released is not None
    assert json.loads(released["data"]["values.json"]) == {
        "greeting": "hello",
        "size": "large",
        "tier": {"level": 2, "cluster": "edge-1"},
    }


@pytest.mark.timeout(300)
def test_the_real_api_server_refuses_a_field_an_older_flux_crd_lacks(tenancy: Tenancy) -> None:
    """bundler's strict writes of Flux kinds against a real kube-apiserver whose HelmRelease CRD is
    older than a field (helm-controller v1.6.2's CRD without postRenderStrategy, under a group of
    the test's own so the cluster's Flux is untouched): refused, and the hint names the Flux."""
    group = f"{tenancy.workspace}.e2e.bundler.dev"
    flux_crd = next(p for p in tenancy.env.tools.flux_crds if p.name.endswith("helmreleases.yaml"))
    crd = yaml.safe_load(flux_crd.read_text())
    crd["metadata"]["name"] = f"helmreleases.{group}"
    crd["spec"]["group"] = group
    (version,) = crd["spec"]["versions"]
    del version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "postRenderStrategy"
    ]
    path = tenancy.workdir / "older-helmreleases.yaml"
    path.write_text(yaml.safe_dump(crd))
    management = tenancy.management
    management.install_crds(path)
    older = Resource(group, "v2", "HelmRelease", "helmreleases", strict_fields=True)
    release: dict[str, Any] = {
        "apiVersion": f"{group}/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "app", "namespace": tenancy.workspace},
        "spec": {
            "interval": "10m",
            "chartRef": {"kind": "OCIRepository", "name": "app"},
            "postRenderStrategy": "nohooks",
        },
    }
    try:
        with KubeStore.from_kubeconfig(management.admin_kubeconfig) as store:
            with pytest.raises(Invalid) as refused:
                store.create(older, release)
            del release["spec"]["postRenderStrategy"]
            store.create(older, release)
    finally:
        management.kubectl("delete", "customresourcedefinition", crd["metadata"]["name"])
    message = str(refused.value)
    assert 'strict decoding error: unknown field "spec.postRenderStrategy"' in message
    hint = unknown_field_hint(message)
    assert hint is not None and "helm-controller v1.6.0 (Flux v2.9.0)" in hint
