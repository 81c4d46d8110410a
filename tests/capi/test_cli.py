"""`bundler render` over examples/capi: the CAPI inputs are imported and gated as the manager does,
Calico gets an IP pool per pod CIDR, and `--flux` shows remote-mode HelmReleases reaching each
cluster through `spec.kubeConfig.secretRef`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bundler.core.labels import LABEL_CLUSTER_NAME
from tests.support.cli_helpers import run_cli
from tests.support.schemas import validate

EXAMPLES = Path(__file__).parents[2] / "examples"
POOL = {"encapsulation": "VXLAN", "natOutgoing": "Enabled", "nodeSelector": "all()"}

# bundler.inputs hands CAPI documents to bundler.capi.render_inputs.import_documents.


def render(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict[str, Any]]]:
    code, out, err = run_cli(capsys, "render", *argv, "-o", "json")
    assert code == 0, err
    items: list[dict[str, Any]] = json.loads(out)["items"]
    return code, items


def test_render_imports_capi_clusters_with_the_gate(capsys: pytest.CaptureFixture[str]) -> None:
    _, items = render(capsys, "-f", str(EXAMPLES / "capi"), "--flux")
    deployments = {
        i["metadata"]["labels"][LABEL_CLUSTER_NAME]: i["spec"]["options"]["helm"]["values"]
        for i in items
        if i["kind"] == "BundleDeployment"
    }
    assert {
        name: values["installation"]["calicoNetwork"]["ipPools"]
        for name, values in deployments.items()
    } == {
        "eu-west-1": [{"cidr": "192.168.0.0/16", **POOL}],
        "us-east-1": [{"cidr": "10.244.0.0/16", **POOL}, {"cidr": "10.245.0.0/16", **POOL}],
    }
    releases = [i for i in items if i["kind"] == "HelmRelease"]
    assert len(releases) == 2
    for release in releases:
        validate(release)
        cluster = release["metadata"]["labels"][LABEL_CLUSTER_NAME]
        secret_ref = release["spec"]["kubeConfig"]["secretRef"]
        assert secret_ref["name"] == f"{cluster}-kubeconfig"


def test_the_whole_examples_directory_renders(capsys: pytest.CaptureFixture[str]) -> None:
    code, items = render(capsys, "-f", str(EXAMPLES))
    assert code == 0 and items
