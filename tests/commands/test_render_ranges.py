"""`bundler render` with version ranges: offline by default (the range stays as written; with --flux
the bundle gets an error line instead of Flux objects, exit 1), `--resolve` asks the repository
as the manager does, with credentials from the Bundle's `helm.secretRef` Secret among the inputs,
else from the Docker config."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.builders import WS, bundle, cluster
from tests.support.cli_helpers import run_cli
from tests.support.manager.registry_charts import CHART, docker_config_json, push, unique_path
from tests.support.registry_fixtures import LocalRegistry

ALL: list[dict[str, Any]] = [{"clusterSelector": {}}]
pytestmark = pytest.mark.usefixtures("docker_config")

RANGE_ERROR = "error: Bundle fleet-default/ranged: version '6.*' is a range, which the manager"


def inputs(tmp_path: Path, repo: str, version: str | None = "6.*") -> Path:
    """Two bundles on one cluster: `ranged` (repo, `version`; None: unset) and `pinned` (an exact
    version)."""
    ranged = bundle(ALL, name="ranged", helm={"repo": repo, "chart": CHART, "version": version})
    wire = [
        cluster("a").to_wire(),
        ranged.to_wire(),  # to_wire leaves out a version of None
        bundle(ALL, name="pinned").to_wire(),
    ]
    path = tmp_path / "inputs.yaml"
    path.write_text(yaml.safe_dump_all(wire))
    return path


def by_kind(out: str) -> dict[str, dict[str, Any]]:
    """The printed objects by `Kind/bundle-name`."""
    items = json.loads(out)["items"]
    return {f"{i['kind']}/{i['metadata']['labels']['bundler.dev/bundle-name']}": i for i in items}


@pytest.fixture
def pushed(oci_registry: LocalRegistry, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    path = unique_path(request.node.name)
    for version in ("6.0.0", "6.1.0", "7.0.0"):
        push(oci_registry, path, version, tmp_path)
    return oci_registry.oci(path)


def test_offline_a_range_stays_as_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run_cli(
        capsys, "render", "-f", str(inputs(tmp_path, "oci://127.0.0.1:9/c")), "-o", "json"
    )
    assert (result.code, result.stderr) == (0, "")
    ranged = by_kind(result.stdout)["BundleDeployment/ranged"]
    assert ranged["spec"]["options"]["helm"]["version"] == "6.*"


def test_flux_objects_need_a_concrete_version(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = inputs(tmp_path, "oci://127.0.0.1:9/c")
    result = run_cli(capsys, "render", "-f", str(path), "--flux", "-o", "json")
    assert result.code == 1
    assert result.stderr.startswith(RANGE_ERROR)
    assert "pass --resolve" in result.stderr and "Traceback" not in result.stderr
    printed = by_kind(result.stdout)
    assert "BundleDeployment/ranged" in printed and "HelmRelease/ranged" not in printed
    assert "HelmRelease/pinned" in printed


def test_resolve_asks_the_registry(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pushed: str
) -> None:
    path = inputs(tmp_path, pushed)
    result = run_cli(capsys, "render", "-f", str(path), "--flux", "--resolve", "-o", "json")
    assert (result.code, result.stderr) == (0, "")
    printed = by_kind(result.stdout)
    assert printed["BundleDeployment/ranged"]["spec"]["options"]["helm"]["version"] == "6.1.0"
    assert printed["OCIRepository/ranged"]["spec"]["ref"]["tag"] == "6.1.0"


def test_no_version_resolves_to_the_latest_stable_release_like_the_range_star(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    oci_registry: LocalRegistry,
    request: pytest.FixtureRequest,
) -> None:
    path = unique_path(request.node.name)
    for version in ("6.1.0", "7.0.0", "8.0.0-rc.1"):
        push(oci_registry, path, version, tmp_path)
    argv = ("render", "-f", str(inputs(tmp_path, oci_registry.oci(path), version=None)))
    result = run_cli(capsys, *argv, "--flux", "--resolve", "-o", "json")
    assert (result.code, result.stderr) == (0, "")
    printed = by_kind(result.stdout)
    assert printed["BundleDeployment/ranged"]["spec"]["options"]["helm"]["version"] == "7.0.0"
    assert printed["OCIRepository/ranged"]["spec"]["ref"]["tag"] == "7.0.0"


def test_a_range_that_does_not_resolve_is_an_error_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pushed: str
) -> None:
    path = inputs(tmp_path, pushed, version="~9.1")
    result = run_cli(capsys, "render", "-f", str(path), "--resolve", "-o", "json")
    assert result.code == 1
    assert "no version of chart 'demo' matches '~9.1'; newest available: 7.0.0" in result.stderr
    assert set(by_kind(result.stdout)) == {"BundleDeployment/pinned"}


def test_credentials_come_from_the_docker_config(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    oci_registry_basic_auth: LocalRegistry,
    request: pytest.FixtureRequest,
) -> None:
    registry = oci_registry_basic_auth
    assert registry.username is not None and registry.password is not None
    repo_path = unique_path(request.node.name)
    push(registry, repo_path, "6.0.0", tmp_path)
    path = str(inputs(tmp_path, registry.oci(repo_path)))
    refused = run_cli(capsys, "render", "-f", path, "--resolve")
    assert refused.code == 1
    assert "authentication required" in refused.stderr and "Docker config" in refused.stderr
    config = tmp_path / "auth.json"
    config.write_text(docker_config_json(registry.host, registry.username, registry.password))
    argv = ("render", "-f", path, "--resolve", "--registry-config", str(config), "-o", "json")
    resolved = run_cli(capsys, *argv)
    assert resolved.code == 0, resolved.stderr
    ranged = by_kind(resolved.stdout)["BundleDeployment/ranged"]
    assert ranged["spec"]["options"]["helm"]["version"] == "6.0.0"


def test_credentials_come_from_the_bundles_secret_among_the_inputs(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    oci_registry_basic_auth: LocalRegistry,
    request: pytest.FixtureRequest,
) -> None:
    registry = oci_registry_basic_auth
    assert registry.username is not None and registry.password is not None
    repo_path = unique_path(request.node.name)
    push(registry, repo_path, "6.0.0", tmp_path)
    helm = {"repo": registry.oci(repo_path), "chart": CHART, "version": "6.*"}
    credentials = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "registry-creds", "namespace": WS},
        "type": "kubernetes.io/basic-auth",
        "stringData": {"username": registry.username, "password": registry.password},
    }
    documents = [
        cluster("a").to_wire(),
        bundle(
            ALL, name="ranged", helm={**helm, "secretRef": {"name": "registry-creds"}}
        ).to_wire(),
        bundle(ALL, name="other", helm=helm).to_wire(),
        credentials,
    ]
    path = tmp_path / "inputs.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    result = run_cli(capsys, "render", "-f", str(path), "--resolve", "-o", "json")
    # The bundle naming the Secret resolves with it; the other one has no credentials.
    assert result.code == 1
    assert "error: Bundle fleet-default/other:" in result.stderr
    assert "authentication required" in result.stderr
    printed = by_kind(result.stdout)
    assert set(printed) == {"BundleDeployment/ranged"}  # the Secret itself is not printed
    assert printed["BundleDeployment/ranged"]["spec"]["options"]["helm"]["version"] == "6.0.0"


def test_a_missing_registry_config_is_invalid_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = str(inputs(tmp_path, "oci://127.0.0.1:9/c"))
    result = run_cli(capsys, "render", "-f", path, "--resolve", "--registry-config", "/nope.json")
    assert result.code == 2
    assert "--registry-config: /nope.json does not exist" in result.stderr
