"""Management values over HTTP, each process under its own identity: the manager (exactly its RBAC)
copies a workspace Secret into the cluster namespaces, the pull agent (the kubeconfig
`agent-kubeconfig` prints) writes it next to its HelmRelease downstream, the remote agent's
HelmRelease reads the copy in the cluster namespace; a change rolls out as new copies, and copies
no longer named go on both sides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bundler.api.resources import BUNDLE, HELM_RELEASE, SECRET
from bundler.core.naming import cluster_namespace
from bundler.store.errors import NotFound
from bundler.store.protocol import Obj
from tests.support.agent.http_fleet import AGENT_NAMESPACE, HttpFleet, eventually
from tests.support.builders import WS, bundle
from tests.support.schemas import validate
from tests.support.values_objects import encoded, management, values_secret

EVERYWHERE: list[dict[str, Any]] = [{"clusterSelector": {}}]


def app(values_from: list[dict[str, Any]] | None) -> dict[str, Any]:
    helm = {"version": "1.0.0", "values": {"greeting": "inline"}, "valuesFrom": values_from}
    return bundle(EVERYWHERE, name="app", helm=helm, namespace="apps").to_wire()


def _release(store: Any, namespace: str) -> Obj | None:
    try:
        found: Obj = store.get(HELM_RELEASE, "app", namespace)
    except NotFound:
        return None
    return found


def _secret(store: Any, name: str, namespace: str) -> Obj | None:
    try:
        found: Obj = store.get(SECRET, name, namespace)
    except NotFound:
        return None
    return found


def _named(release: Obj | None) -> list[tuple[str, str]]:
    entries = ((release or {}).get("spec") or {}).get("valuesFrom") or []
    return [(entry["kind"], entry["name"]) for entry in entries]


def test_a_management_secret_reaches_both_modes_rolls_out_and_goes(
    tmp_path: Path, http_fleets: list[HttpFleet]
) -> None:
    fleet = HttpFleet(tmp_path)
    http_fleets.append(fleet)
    pulled = fleet.add_cluster("eu-1")
    flux = fleet.serve_remote()
    store = fleet.management.store
    fleet.add_remote_cluster("edge-1")
    store.create(SECRET, values_secret("db-values", {"values.yaml": "db: {password: one}\n"}))
    fleet.start(flux)
    values_from = [management("Secret", "db-values", valuesKey="values.yaml")]
    fleet.put(BUNDLE, app(values_from))
    eventually(lambda: fleet.ready_clusters("app") == "2/2", "both clusters Ready")

    def copy_names() -> set[str]:
        bds = fleet.bundle_deployments()
        return {bd["spec"]["options"]["managementValues"][0]["secretName"] for bd in bds}

    (first,) = copy_names()  # the same data, the same copy name in every cluster namespace
    pulled_release = pulled.release("app")
    assert _named(pulled_release) == [("Secret", first)]
    assert pulled_release is not None
    assert pulled_release["spec"]["valuesFrom"][0] == {
        "kind": "Secret",
        "name": first,
        "valuesKey": "values.yaml",
    }
    downstream = pulled.server.store.get(SECRET, first, AGENT_NAMESPACE)
    assert downstream["data"] == {"values.yaml": encoded("db: {password: one}\n")}
    assert downstream["metadata"]["labels"]["bundler.dev/bundledeployment"] == "app"
    edge_namespace = cluster_namespace(WS, "edge-1")
    remote_release = _release(store, edge_namespace)
    assert remote_release is not None
    validate(remote_release)
    assert _named(remote_release) == [("Secret", first)]
    assert _secret(store, first, edge_namespace) is not None  # the manager's copy, read in place

    # A change of the data: new copies, a new deploymentID on both clusters, the old copies gone.
    store.patch(
        SECRET, "db-values", {"data": {"values.yaml": encoded("db: {password: two}\n")}}, WS
    )
    eventually(
        lambda: len(copy_names() - {first}) == 1 and len(copy_names()) == 1,
        "new options naming a new copy on both clusters",
    )
    (second,) = copy_names()
    eventually(
        lambda: (
            _named(pulled.release("app")) == [("Secret", second)]
            and _named(_release(store, edge_namespace)) == [("Secret", second)]
        ),
        "both HelmReleases to read the new copy",
    )
    eventually(lambda: fleet.ready_clusters("app") == "2/2", "both clusters Ready again")
    changed = pulled.server.store.get(SECRET, second, AGENT_NAMESPACE)
    assert changed["data"] == {"values.yaml": encoded("db: {password: two}\n")}
    eventually(
        lambda: (
            _secret(pulled.server.store, first, AGENT_NAMESPACE) is None
            and all(
                _secret(store, first, cluster_namespace(WS, name)) is None
                for name in ("eu-1", "edge-1")
            )
        ),
        "the old copies to go",
    )

    # No longer named: the copies go on both sides, the releases read nothing.
    fleet.put(BUNDLE, app(None))
    eventually(
        lambda: (
            _named(pulled.release("app")) == []
            and _named(_release(store, edge_namespace)) == []
            and _secret(pulled.server.store, second, AGENT_NAMESPACE) is None
            and all(
                _secret(store, second, cluster_namespace(WS, name)) is None
                for name in ("eu-1", "edge-1")
            )
        ),
        "every copy to go once no deployment names it",
    )
    assert fleet.management.denials() == []
    assert pulled.server.denials() == []
