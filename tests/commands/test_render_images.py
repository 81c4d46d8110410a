"""`bundler render` with `spec.images`: offline the policy shows in place of the tag (a warning
says so); `--resolve` asks the real registry (docker-registry on 127.0.0.1, tiny images pushed by
the test) and the values hold the real tag and digest; an unreachable registry holds the clusters
reading the image, with an error line each and no traceback."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.builders import WS, bundle, cluster
from tests.support.cli_helpers import CliResult, run_cli
from tests.support.registry_fixtures import LocalRegistry, closed_port
from tests.support.registry_images import push_tags

VALUES = {"image": "${ images.web.ref }", "tag": "${ images.web.tag }"}
PRERELEASES = {"name": "web", "policy": {"semver": {"range": ">=2.0.0-0"}}}
TARGETS: list[dict[str, Any]] = [
    {"name": "staging", "clusterName": "stage", "images": [PRERELEASES]},
    {"name": "plain", "clusterName": "plain", "helm": {"values": {"tag": "fixed", "image": "x"}}},
    {"name": "everyone", "clusterSelector": {}},
]


def inputs(tmp_path: Path, repository: str) -> Path:
    image = {"name": "web", "repository": repository, "policy": {"semver": {"range": "^1.0"}}}
    app = bundle(TARGETS, helm={"values": VALUES}, images=[image])
    documents = [c.to_wire() for c in (cluster("prod"), cluster("stage"), cluster("plain"))]
    path = tmp_path / "inputs.yaml"
    path.write_text(yaml.safe_dump_all([*documents, app.to_wire()]))
    return path


def render(capsys: pytest.CaptureFixture[str], path: Path, *flags: str) -> CliResult:
    return run_cli(capsys, "render", "-f", str(path), "-o", "json", *flags)


def values_by_cluster(out: str) -> dict[str, Any]:
    items = json.loads(out)["items"]
    return {
        i["metadata"]["labels"]["bundler.dev/cluster-name"]: i["spec"]["options"]["helm"]["values"]
        for i in items
    }


def test_without_resolve_the_policy_shows_in_place_of_the_tag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = render(capsys, inputs(tmp_path, "registry.example/web"))
    assert result.code == 0, result.stderr
    values = values_by_cluster(result.stdout)
    assert values["prod"] == {"image": "registry.example/web:<semver ^1.0>", "tag": "<semver ^1.0>"}
    assert values["stage"]["tag"] == "<semver >=2.0.0-0>"
    assert f"warning: Bundle {WS}/app: images (web) are resolved by the manager" in result.stderr
    assert "--resolve" in result.stderr


def test_resolve_asks_the_registry_per_selection(
    capsys: pytest.CaptureFixture[str],
    oci_registry: LocalRegistry,
    tmp_path: Path,
    docker_config: Path,
) -> None:
    repository = f"{oci_registry.host}/t/render-images"
    pushed = push_tags(oci_registry, "t/render-images", ["1.0.0", "1.4.0", "2.0.0-rc.1"])
    result = render(capsys, inputs(tmp_path, repository), "--resolve")
    assert result.code == 0, result.stderr
    values = values_by_cluster(result.stdout)
    digest = pushed["1.4.0"].digest
    assert values["prod"] == {"image": f"{repository}:1.4.0@{digest}", "tag": "1.4.0"}
    assert values["stage"]["tag"] == "2.0.0-rc.1"
    assert values["plain"] == {"image": "x", "tag": "fixed"}
    lines = [line for line in result.stderr.splitlines() if line.startswith("resolved:")]
    assert lines == [
        f"resolved: Bundle {WS}/app: image web: {repository}:1.4.0@{digest}",
        f"resolved: Bundle {WS}/app: image web (target staging): "
        f"{repository}:2.0.0-rc.1@{pushed['2.0.0-rc.1'].digest}",
    ]


def test_an_unreachable_registry_holds_the_clusters_reading_the_image(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, docker_config: Path
) -> None:
    repository = f"127.0.0.1:{closed_port()}/web"
    result = render(capsys, inputs(tmp_path, repository), "--resolve", "--registry-timeout", "2")
    assert result.code == 1
    assert "Traceback" not in result.stderr
    assert set(values_by_cluster(result.stdout)) == {"plain"}
    held = re.findall(
        r"^error: Bundle \S+ for Cluster \S+/(\w+): .*image 'web' is not resolved",
        result.stderr,
        re.M,
    )
    assert sorted(held) == ["prod", "stage"]
    assert (
        f"warning: Bundle {WS}/app: image web not resolved (RegistryUnavailable)" in result.stderr
    )
