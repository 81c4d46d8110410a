"""`render --flux` prints exactly the Flux objects the agents write: every example (management
values among them, read from the inputs by render and delivered by the manager), and a Bundle
with registry credentials, run through the whole fleet in memory (manager, agents, simulated Flux)
and compared object by object with the offline render."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import HELM_RELEASE, HELM_REPOSITORY, OCI_REPOSITORY
from bundler.commands.render import render_world
from bundler.inputs import load_world
from bundler.runtime.clock import SystemClock
from bundler.sim.fleet import Fleet, FleetOptions

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FLUX = (HELM_RELEASE, HELM_REPOSITORY, OCI_REPOSITORY)
# What the agent writes of an object; Flux adds finalizers and status, the store its metadata.
OWNED = ("apiVersion", "kind", "spec")
OWNED_META = ("name", "namespace", "labels", "annotations")

CREDENTIALS = """
apiVersion: v1
kind: Secret
metadata: {name: registry-creds, namespace: ws}
type: kubernetes.io/basic-auth
stringData: {username: u, password: p}
---
apiVersion: bundler.dev/v1alpha1
kind: Cluster
metadata: {name: edge, namespace: ws}
---
apiVersion: bundler.dev/v1alpha1
kind: Bundle
metadata: {name: private, namespace: ws}
spec:
  helm:
    repo: https://charts.example.com
    chart: app
    version: 1.0.0
    secretRef: {name: registry-creds}
  targets: [{clusterSelector: {}}]
"""


def owned(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj["metadata"]
    return {
        **{k: obj.get(k) for k in OWNED},
        "metadata": {k: meta.get(k) or None for k in OWNED_META},
    }


def key(obj: dict[str, Any]) -> tuple[str, str, str]:
    return obj["kind"], obj["metadata"]["namespace"], obj["metadata"]["name"]


def written_by_agents(paths: list[Path]) -> dict[tuple[str, ...], dict[str, Any]]:
    """Every Flux object the agents of a simulated fleet wrote, by cluster and key."""
    fleet = Fleet(load_world([str(p) for p in paths]), FleetOptions(flux_delay=0), SystemClock())
    fleet.start()
    try:
        deadline = time.monotonic() + 60
        while not fleet.converged():
            assert time.monotonic() < deadline, "the fleet did not come to rest"
            time.sleep(0.05)
        found: dict[tuple[str, ...], dict[str, Any]] = {}
        for store in fleet.stores():
            for res in FLUX:
                for obj in store.list(res).items:
                    cluster = obj["metadata"]["annotations"]["bundler.dev/cluster"]
                    found[(cluster, *key(obj))] = owned(obj)
        return found
    finally:
        fleet.stop()


CASES = {
    "podinfo": ["podinfo"],
    "oci": ["oci", "podinfo"],
    "calico-remote-mode": ["calico"],
    "capi-import": ["capi"],
    "management-values": ["management-values", "podinfo"],
    "registry-credentials": [],
}


@pytest.mark.parametrize("example", list(CASES), ids=list(CASES))
def test_render_flux_writes_what_the_agents_write(example: str, tmp_path: Path) -> None:
    paths = [EXAMPLES / name for name in CASES[example]]
    if not paths:
        (tmp_path / "in.yaml").write_text(CREDENTIALS)
        paths = [tmp_path]
    objects, errors = render_world(load_world([str(p) for p in paths]), with_flux=True)
    assert not [e for e in errors if e.startswith("error:")], errors
    rendered = {
        (o["metadata"]["annotations"]["bundler.dev/cluster"], *key(o)): owned(o)
        for o in objects
        if o["kind"] != "BundleDeployment"
    }
    assert rendered, "nothing rendered"
    assert rendered == written_by_agents(paths)
    if example == "registry-credentials":
        (source,) = (o for k, o in rendered.items() if k[1] == "HelmRepository")
        assert source["spec"]["secretRef"] == {"name": "private-credentials"}
