"""Acceptance: a Bundle image on `^1.0` against the real registry follows newly pushed tags.

The simulated fleet (manager, agents, simulated Flux, in memory, ManualClock) with the manager's
ImageResolver and docker-registry on 127.0.0.1: image 1.0.0 rolls out to every cluster that reads
it; 1.1.0 is pushed; once pollInterval has passed the Bundle resolves it, the deploymentIDs of
those clusters change (a cluster whose values do not read the image keeps its own), and the
rollout strategy (maxUnavailable 1) lets one cluster at a time take it until all are Ready again.
Mirrors tests/manager/test_registry_rollout.py, where a pushed chart version rolls out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, HELM_RELEASE
from bundler.oci.images import ImageResolver
from bundler.runtime.clock import ManualClock
from bundler.sim.fleet import Fleet, FleetOptions
from bundler.store.protocol import Obj
from tests.support.agent.http_fleet import AGENT_NAMESPACE
from tests.support.builders import WS, bundle, cluster
from tests.support.cli_helpers import run_cli
from tests.support.manager.registry_charts import unique_path
from tests.support.manager.registry_rollout import Rollout, is_unavailable
from tests.support.manager.sim_driver import run_until, running_fleet
from tests.support.manager.world import world
from tests.support.registry_fixtures import LocalRegistry
from tests.support.registry_images import push_tags

USING = ("a", "b", "c")
# `plain` reads no image: its deploymentID must not move with the image.
TARGETS: list[dict[str, Any]] = [
    {"name": "plain", "clusterName": "plain", "helm": {"values": {"image": "fixed"}}},
    {"name": "everyone", "clusterSelector": {}},
]


def web_bundle(repository: str, **helm: Any) -> Any:
    image = {"name": "web", "repository": repository, "policy": {"semver": {"range": "^1.0"}}}
    values = {"image": "${ images.web.ref }"}
    spec = {"values": values, "pollInterval": "10m", **helm}
    return bundle(
        TARGETS,
        helm=spec,
        namespace="apps",
        images=[image],
        rolloutStrategy={"maxUnavailable": 1},
    )


def _image(options: Obj | None) -> str | None:
    return None if options is None else options["helm"]["values"]["image"]


def deployments(fleet: Fleet) -> dict[str, Obj]:
    items = fleet.store.list(BUNDLE_DEPLOYMENT).items
    return {bd["metadata"]["labels"]["bundler.dev/cluster-name"]: bd for bd in items}


def all_ready_on(fleet: Fleet, ref: str) -> Callable[[], bool]:
    def check() -> bool:
        status = fleet.store.get(BUNDLE, "app", WS).get("status") or {}
        resolved = status.get("resolvedImages") or [{}]
        found = deployments(fleet)
        using = [found.get(name) for name in USING]
        return (
            ref.endswith(f":{resolved[0].get('tag')}@{resolved[0].get('digest')}")
            and (status.get("display") or {}).get("readyClusters") == "4/4"
            and all(bd is not None and _image(bd["spec"]["options"]) == ref for bd in using)
            and not any(is_unavailable(bd) for bd in found.values())
        )

    return check


def test_a_pushed_image_tag_rolls_out_under_max_unavailable(
    oci_registry: LocalRegistry, request: pytest.FixtureRequest, clock: ManualClock
) -> None:
    path = unique_path(request.node.name)
    repository = f"{oci_registry.host}/{path}"
    first = push_tags(oci_registry, path, ["1.0.0"])["1.0.0"]
    old_ref = f"{repository}:1.0.0@{first.digest}"
    clusters = [cluster(name) for name in (*USING, "plain")]
    options = FleetOptions(
        flux_delay=5.0, workers=2, manager_workers=2, image_resolver=ImageResolver().resolve
    )
    with running_fleet(world(*clusters, web_bundle(repository)), options, clock) as fleet:
        fleet.start()
        run_until(fleet, clock, all_ready_on(fleet, old_ref), "1.0.0 Ready everywhere")
        before = {name: bd["spec"]["deploymentID"] for name, bd in deployments(fleet).items()}
        second = push_tags(oci_registry, path, ["1.1.0"])["1.1.0"]
        new_ref = f"{repository}:1.1.0@{second.digest}"
        rollout = Rollout(new_ref, taken=_image)
        watch = fleet.store.watch(BUNDLE_DEPLOYMENT, rollout.on_event)
        try:
            run_until(fleet, clock, all_ready_on(fleet, new_ref), "1.1.0 Ready everywhere")
        finally:
            watch.stop()
        after = {name: bd["spec"]["deploymentID"] for name, bd in deployments(fleet).items()}
        assert all(after[name] != before[name] for name in USING)
        assert after["plain"] == before["plain"]
        assert rollout.staged and rollout.most_unavailable == 1
        for sim in fleet.clusters:
            assert sim.store is not None
            release = sim.store.get(HELM_RELEASE, "app", AGENT_NAMESPACE)
            wanted = "fixed" if sim.cluster.metadata.name == "plain" else new_ref
            assert release["spec"]["values"]["image"] == wanted


def test_bundler_sim_resolves_images_against_the_registry(
    capsys: pytest.CaptureFixture[str],
    docker_config: Path,
    oci_registry: LocalRegistry,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    path = unique_path(request.node.name)
    pushed = push_tags(oci_registry, path, ["1.0.0", "1.2.0", "2.0.0"])
    repository = f"{oci_registry.host}/{path}"
    documents = [cluster("a").to_wire(), web_bundle(repository).to_wire()]
    inputs = tmp_path / "inputs.yaml"
    inputs.write_text(yaml.safe_dump_all(documents))
    result = run_cli(
        capsys, "sim", "-f", str(inputs), "--flux-delay", "0", "--json", "--values", f"{WS}/app"
    )
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    ready = [(b["bundle"], b["ready"], b["desired"], b["state"]) for b in report["bundles"]]
    assert ready == [(f"{WS}/app", 1, 1, "Ready")]
    assert f"{repository}:1.2.0@{pushed['1.2.0'].digest}" in json.dumps(report["values"])
    (shown,) = report["bundles"]
    assert [(i["tag"], i["digest"]) for i in shown["images"]] == [("1.2.0", pushed["1.2.0"].digest)]
