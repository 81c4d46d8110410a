"""The offline commands on a Kustomize Bundle: render, explain and diff show its options, render
--flux its Flux objects, and a Bundle with both kinds of content is refused naming the Bundle and
the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.support.cli_helpers import run_cli
from tests.support.schemas import validate

FLEET = """
apiVersion: bundler.dev/v1alpha1
kind: Cluster
metadata: {name: prod-1, namespace: fleet-default, labels: {env: prod}}
---
apiVersion: bundler.dev/v1alpha1
kind: Cluster
metadata: {name: dev-1, namespace: fleet-default, labels: {env: dev}}
---
apiVersion: bundler.dev/v1alpha1
kind: Bundle
metadata: {name: web, namespace: fleet-default}
spec:
  namespace: web
  kustomize:
    source: {oci: {url: "oci://registry.example/manifests/web", tag: TAG}}
    path: ./deploy
  targets:
    - clusterSelector: {matchLabels: {env: prod}}
      kustomize: {path: ./prod}
    - clusterSelector: {}
"""


def _fleet(tmp_path: Path, name: str, tag: str = "1.0.0") -> Path:
    path = tmp_path / name
    path.write_text(FLEET.replace("TAG", tag))
    return path


def test_render_prints_each_clusters_kustomize_options(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run_cli(capsys, "render", "-f", str(_fleet(tmp_path, "a.yaml")))
    assert code == 0, err
    paths = {
        d["metadata"]["labels"]["bundler.dev/cluster-name"]: d["spec"]["options"]["kustomize"]
        for d in yaml.safe_load_all(out)
        if d is not None
    }
    assert {name: k["path"] for name, k in paths.items()} == {
        "prod-1": "./prod",
        "dev-1": "./deploy",
    }
    assert {k["source"]["oci"]["tag"] for k in paths.values()} == {"1.0.0"}


def test_explain_shows_the_merged_kustomize_options(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fleet = str(_fleet(tmp_path, "a.yaml"))
    code, out, err = run_cli(
        capsys,
        "explain",
        "-f",
        fleet,
        "--bundle",
        "fleet-default/web",
        "--cluster",
        "fleet-default/prod-1",
    )
    assert code == 0, err
    assert "deployed by targets[0]" in out
    assert "path: ./prod" in out


def test_diff_names_the_artifact_version_and_the_options_that_change(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    old, new = _fleet(tmp_path, "old.yaml"), _fleet(tmp_path, "new.yaml", tag="1.1.0")
    code, out, err = run_cli(capsys, "diff", "--from", str(old), "--to", str(new))
    assert code == 0, err
    assert "fleet-default/prod-1: artifact 1.0.0 -> 1.1.0" in out


def test_a_bundle_with_helm_and_kustomize_is_refused_naming_the_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "both.yaml"
    path.write_text(
        FLEET.replace("TAG", "1.0.0").replace(
            "  namespace: web\n",
            "  namespace: web\n  helm: {repo: https://charts.example, chart: web}\n",
        )
    )
    code, _, err = run_cli(capsys, "render", "-f", str(path))
    assert code == 2
    # The CLI points at the document's line (the Bundle's), then the field.
    assert "both.yaml:16: spec.kustomize: give exactly one of spec.helm" in err
    assert "Traceback" not in err


def test_render_flux_prints_each_clusters_source_and_kustomization_valid_against_fluxs_crds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run_cli(
        capsys, "render", "--flux", "-o", "json", "-f", str(_fleet(tmp_path, "a.yaml"))
    )
    assert code == 0, err
    flux = [i for i in json.loads(out)["items"] if i["kind"] != "BundleDeployment"]
    assert sorted(
        (i["kind"], i["metadata"]["labels"]["bundler.dev/cluster-name"]) for i in flux
    ) == [
        ("Kustomization", "dev-1"),
        ("Kustomization", "prod-1"),
        ("OCIRepository", "dev-1"),
        ("OCIRepository", "prod-1"),
    ]
    for item in flux:
        validate(item)
    paths = {
        i["metadata"]["labels"]["bundler.dev/cluster-name"]: i["spec"]["path"]
        for i in flux
        if i["kind"] == "Kustomization"
    }
    assert paths == {"prod-1": "./prod", "dev-1": "./deploy"}


def test_the_kustomize_example_renders_valid_flux_objects_a_source_per_target(
    capsys: pytest.CaptureFixture[str],
) -> None:
    examples = Path(__file__).parents[2] / "examples"
    args = ["-f", str(examples / "kustomize"), "-f", str(examples / "podinfo")]
    code, out, err = run_cli(capsys, "render", "--flux", "-o", "json", *args)
    assert code == 0, err
    ours = [
        i
        for i in json.loads(out)["items"]
        if i["metadata"]["labels"]["bundler.dev/bundle-name"] == "podinfo-manifests"
    ]
    sources = {
        i["metadata"]["labels"]["bundler.dev/cluster-name"]: i["kind"]
        for i in ours
        if i["kind"] in ("OCIRepository", "GitRepository")
    }
    assert sources == {
        "dev-1": "OCIRepository",
        "staging-1": "OCIRepository",
        "staging-2": "OCIRepository",
        "prod-eu-1": "GitRepository",
        "prod-us-1": "GitRepository",
    }
    for item in ours:
        if item["kind"] != "BundleDeployment":
            validate(item)
