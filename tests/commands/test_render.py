from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli_helpers import run_cli
from tests.support.schemas import validate

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples"


def render_json(capsys: pytest.CaptureFixture[str], *paths: Path) -> list[dict[str, Any]]:
    args = [a for p in paths for a in ("-f", str(p))]
    code, out, err = run_cli(capsys, "render", *args, "--flux", "-o", "json")
    assert code == 0, err
    items: list[dict[str, Any]] = json.loads(out)["items"]
    return items


# Examples that use the Clusters of examples/podinfo.
_ON_PODINFO_CLUSTERS = ("oci", "helm-kustomize", "management-values")


@pytest.mark.parametrize(
    "example", ["podinfo", "calico", "oci", "helm-kustomize", "management-values"]
)
def test_every_example_renders_and_flux_objects_validate(
    capsys: pytest.CaptureFixture[str], example: str
) -> None:
    on_podinfo = example in _ON_PODINFO_CLUSTERS
    paths = [EXAMPLES / example] + ([EXAMPLES / "podinfo"] if on_podinfo else [])
    items = render_json(capsys, *paths)
    kinds = {i["kind"] for i in items}
    assert "BundleDeployment" in kinds and "HelmRelease" in kinds
    for item in items:
        if item["kind"] != "BundleDeployment":
            validate(item)
            assert item["metadata"]["annotations"]["bundler.dev/cluster"]


def _values_by_cluster(items: list[dict[str, Any]], bundle: str) -> dict[str, dict[str, Any]]:
    return {
        i["metadata"]["labels"]["bundler.dev/cluster-name"]: i["spec"]["options"]["helm"]["values"]
        for i in items
        if i["kind"] == "BundleDeployment"
        and i["metadata"]["labels"]["bundler.dev/bundle-name"] == bundle
    }


def test_helm_kustomize_patches_per_environment_and_templated_per_cluster(
    capsys: pytest.CaptureFixture[str],
) -> None:
    items = render_json(capsys, EXAMPLES / "helm-kustomize", EXAMPLES / "podinfo")
    releases = {
        i["metadata"]["labels"]["bundler.dev/cluster-name"]: i["spec"]
        for i in items
        if i["kind"] == "HelmRelease" and i["metadata"]["name"] == "podinfo-kustomize"
    }
    assert sorted(releases) == ["dev-1", "prod-eu-1", "prod-us-1", "staging-1", "staging-2"]
    for spec in releases.values():
        assert spec["commonMetadata"]["labels"]["example.com/region"] in cluster_regions()
        assert spec["install"]["strategy"]["name"] == "RetryOnFailure"
    prod = releases["prod-us-1"]["postRenderers"][0]["kustomize"]["patches"]
    deployment = yaml.safe_load(prod[0]["patch"])
    assert deployment["metadata"]["annotations"] == {"example.com/cluster": "prod-us-1"}
    assert deployment["spec"]["replicas"] == 3
    assert yaml.safe_load(prod[1]["patch"])[0]["value"] == "LoadBalancer"
    staging = releases["staging-1"]["postRenderers"][0]["kustomize"]["patches"]
    assert yaml.safe_load(staging[0]["patch"])["spec"]["replicas"] == 3


def cluster_regions() -> set[str]:
    documents = yaml.safe_load_all((EXAMPLES / "podinfo" / "clusters.yaml").read_text())
    return {d["metadata"]["labels"]["region"] for d in documents if d["kind"] == "Cluster"}


def test_podinfo_values_per_environment_and_templated_from_labels(
    capsys: pytest.CaptureFixture[str],
) -> None:
    values = _values_by_cluster(render_json(capsys, EXAMPLES / "podinfo"), "podinfo")
    assert sorted(values) == ["dev-1", "prod-eu-1", "prod-us-1", "staging-1", "staging-2"]
    assert values["prod-eu-1"]["replicaCount"] == 3
    assert values["staging-2"]["replicaCount"] == 2
    assert values["dev-1"]["replicaCount"] == 1
    assert values["prod-eu-1"]["ui"]["message"] == "podinfo on prod-eu-1 in eu-west"
    assert values["prod-eu-1"]["podAnnotations"]["example.com/tier"] == "gold"
    assert values["staging-1"]["podAnnotations"]["example.com/tier"] == "bronze"


def test_calico_ip_pools_follow_each_clusters_pod_cidrs(capsys: pytest.CaptureFixture[str]) -> None:
    items = render_json(capsys, EXAMPLES / "calico")
    values = _values_by_cluster(items, "calico")
    pools = {
        c: [p["cidr"] for p in v["installation"]["calicoNetwork"]["ipPools"]]
        for c, v in values.items()
    }
    assert pools == {
        "capi-eu-1": ["192.168.0.0/16"],
        "capi-us-1": ["10.244.0.0/16", "10.245.0.0/16"],
    }
    releases = [i for i in items if i["kind"] == "HelmRelease"]
    assert {r["spec"]["kubeConfig"]["secretRef"]["name"] for r in releases} == {
        "capi-eu-1-kubeconfig",
        "capi-us-1-kubeconfig",
    }


def test_output_is_sorted_by_bundle_then_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "render", "-f", str(EXAMPLES))
    assert code == 0
    docs = [d for d in yaml.safe_load_all(out) if d]
    keys = [
        (
            d["metadata"]["labels"]["bundler.dev/bundle-namespace"],
            d["metadata"]["labels"]["bundler.dev/bundle-name"],
            d["metadata"]["labels"]["bundler.dev/cluster-name"],
        )
        for d in docs
    ]
    assert keys == sorted(keys)
    per_bundle = {(ns, name): sum(1 for k in keys if k[:2] == (ns, name)) for ns, name, _ in keys}
    assert per_bundle[("fleet-default", "podinfo")] == 5
    assert per_bundle[("fleet-default", "podinfo-oci")] == 2
    assert per_bundle[("capi-fleet", "calico")] == 2


CLUSTERS = """
apiVersion: bundler.dev/v1alpha1
kind: Cluster
metadata: {name: a, namespace: ws, labels: {tier: gold}}
---
apiVersion: bundler.dev/v1alpha1
kind: Cluster
metadata: {name: b, namespace: ws}
"""

BUNDLE = """
apiVersion: bundler.dev/v1alpha1
kind: Bundle
metadata: {name: app, namespace: ws}
spec:
  helm:
    repo: https://charts.example.com
    chart: app
    version: 1.0.0
    values: {tier: "${ cluster.labels.tier }"}
  targets: [{clusterSelector: {}}]
"""


def test_template_error_on_one_cluster_exits_1_and_others_still_print(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "in.yaml").write_text(CLUSTERS + "---" + BUNDLE)
    code, out, err = run_cli(capsys, "render", "-f", str(tmp_path))
    assert code == 1
    docs = [d for d in yaml.safe_load_all(out) if d]
    assert [d["metadata"]["labels"]["bundler.dev/cluster-name"] for d in docs] == ["a"]
    assert "ws/app" in err and "ws/b" in err and "values.tier" in err and "tier" in err
    assert "Traceback" not in err


BAD_INPUTS = [
    ("bad-yaml", "kind: Bundle\nmetadata: {name: [x", "in.yaml:2: malformed YAML"),
    (
        "unknown-field",
        BUNDLE.replace("chart: app", "chart: app\n    colour: blue"),
        "in.yaml:9: spec.helm.colour: unknown field",
    ),
    (
        "bad-selector-operator",
        BUNDLE.replace(
            "{clusterSelector: {}}",
            "{clusterSelector: {matchExpressions: [{key: a, operator: Like}]}}",
        ),
        'in.yaml:11: spec.targets[0].clusterSelector.matchExpressions[0].operator: "Like" is '
        "not one of In, NotIn, Exists, DoesNotExist",
    ),
    (
        "invalid-selector-values",
        BUNDLE.replace(
            "{clusterSelector: {}}",
            "{clusterSelector: {matchExpressions: [{key: a, operator: In}]}}",
        ),
        "in.yaml:11: spec.targets[0].clusterSelector.matchExpressions[0].values:",
    ),
    (
        "wrong-kind-of-ours",
        "apiVersion: bundler.dev/v1alpha1\nkind: Bundel\nmetadata: {name: x}",
        "in.yaml:2: kind: unsupported kind 'Bundel'",
    ),
    (
        "duplicate",
        BUNDLE + "---" + BUNDLE,
        "in.yaml:15: metadata.name: Bundle ws/app is also defined at",
    ),
]


@pytest.mark.parametrize(
    ("text", "message"), [c[1:] for c in BAD_INPUTS], ids=[c[0] for c in BAD_INPUTS]
)
def test_invalid_input_exits_2_with_file_line_field_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / "in.yaml").write_text(text)
    code, out, err = run_cli(capsys, "render", "-f", str(tmp_path / "in.yaml"))
    assert code == 2
    assert out == ""
    assert message.replace("in.yaml", str(tmp_path / "in.yaml")) in err
    assert "Traceback" not in err


def test_missing_path_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "render", "-f", str(tmp_path / "nope"))
    assert code == 2 and "no such file or directory" in err


def test_explain_names_the_deciding_target_and_failed_criteria(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(
        capsys,
        "explain",
        "-f",
        str(EXAMPLES / "podinfo"),
        "--bundle",
        "fleet-default/podinfo",
        "--cluster",
        "fleet-default/staging-1",
    )
    assert code == 0
    assert "deployed by staging" in out
    assert "prod: does not match (clusterSelector)" in out
    assert "replicaCount: 2" in out


def test_explain_unknown_bundle_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(
        capsys,
        "explain",
        "-f",
        str(EXAMPLES / "podinfo"),
        "--bundle",
        "x/y",
        "--cluster",
        "fleet-default/dev-1",
    )
    assert code == 2 and "--bundle" in err


def test_crds_command_matches_crds_dir(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "crds")
    assert code == 0
    printed = [d for d in yaml.safe_load_all(out) if d]
    on_disk = [yaml.safe_load(p.read_text()) for p in sorted((ROOT / "crds").glob("*.yaml"))]
    assert sorted(printed, key=str) == sorted(on_disk, key=str)


def test_python_dash_m_bundler_behaves_like_bundler() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bundler", "render", "-f", str(EXAMPLES / "podinfo")],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "kind: BundleDeployment" in proc.stdout


MISSING_REFERENCES = BUNDLE.replace(
    "targets: [{clusterSelector: {}}]",
    "targets: [{name: prod, clusterGroup: prodution}, {clusterName: a}]\n"
    "  dependsOn: [{name: nope}]",
)


def test_render_warns_naming_a_missing_cluster_group_and_dependency(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "in.yaml").write_text(CLUSTERS + "---" + MISSING_REFERENCES)
    code, _, err = run_cli(capsys, "render", "-f", str(tmp_path))
    assert code == 0
    assert (
        "warning: Bundle ws/app: spec.targets[0].clusterGroup: ClusterGroup ws/prodution does "
        "not exist, so it targets nothing" in err
    )
    assert "warning: Bundle ws/app: spec.dependsOn[0]: Bundle ws/nope does not exist" in err


FLEET_SYNTAX = BUNDLE.replace(
    'values: {tier: "${ cluster.labels.tier }"}',
    'values: {tier: "${ .ClusterLabels.tier }", region: global.fleet.clusterLabels.region}',
)


@pytest.mark.parametrize("command", ["render", "explain"])
def test_fleet_syntax_in_values_is_told_as_such(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    (tmp_path / "in.yaml").write_text(CLUSTERS + "---" + FLEET_SYNTAX)
    extra = ["--bundle", "ws/app", "--cluster", "ws/a"] if command == "explain" else []
    code, out, err = run_cli(capsys, command, "-f", str(tmp_path), *extra)
    assert code == 1
    assert (
        "warning: Bundle ws/app: spec.helm.values.region: 'global.fleet.clusterLabels.region' is "
        "Fleet's cluster label substitution, which bundler does not do" in err
    )
    assert "values.tier: invalid template: " in out + err  # explain prints it in its report
    assert (
        "this is Go-template syntax as in Fleet; in bundler write ${ ClusterLabels.tier }"
        in out + err
    )


def test_explain_says_the_cluster_group_does_not_exist(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "in.yaml").write_text(CLUSTERS + "---" + MISSING_REFERENCES)
    argv = ("explain", "-f", str(tmp_path), "--bundle", "ws/app", "--cluster", "ws/a")
    code, out, err = run_cli(capsys, *argv)
    assert code == 0
    assert "prod: does not match (clusterGroup: ClusterGroup ws/prodution does not exist)" in out
    assert "Bundle ws/nope does not exist" in err


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_explain_output_flag_prints_the_explanation_with_camel_case_keys(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str
) -> None:
    (tmp_path / "in.yaml").write_text(CLUSTERS + "---" + MISSING_REFERENCES)
    argv = ("explain", "-f", str(tmp_path), "--bundle", "ws/app", "--cluster", "ws/a", "-o", fmt)
    code, out, _ = run_cli(capsys, *argv)
    assert code == 0
    explained = json.loads(out) if fmt == "json" else yaml.safe_load(out)
    assert explained["deployed"] is True
    assert explained["clusterGroups"] == []
    assert [t["matched"] for t in explained["targets"]] == [False, True]
    assert explained["options"]["helm"]["values"] == {"tier": "gold"}
    assert len(explained["warnings"]) == 2


NO_VERSION = BUNDLE.replace("    version: 1.0.0\n", "").replace("${ cluster.labels.tier }", "x")


def test_a_bundle_without_version_renders_as_the_range_star_until_resolved(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "in.yaml").write_text(CLUSTERS + "---" + NO_VERSION)
    code, out, _ = run_cli(capsys, "render", "-f", str(tmp_path))
    assert code == 0
    docs = [d for d in yaml.safe_load_all(out) if d]
    assert {d["spec"]["options"]["helm"]["version"] for d in docs} == {"*"}
    code, _, err = run_cli(capsys, "render", "-f", str(tmp_path), "--flux")
    assert code == 1 and "version '*' (no version means '*': the latest stable release)" in err
    assert "--resolve" in err


GATED = (
    "Bundle capi-workloads/calico on Cluster capi-workloads/ap-south-1: not deployed: the cluster "
    "is gated: ControlPlaneNotInitialized: the Cluster API control plane is not initialized yet; "
    "nothing is deployed until it is; once it opens:"
)


def test_explain_on_a_gated_cluster_says_so_and_still_lists_each_target(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ("explain", "-f", str(EXAMPLES / "capi"), "--bundle", "capi-workloads/calico")
    code, out, _ = run_cli(capsys, *argv, "--cluster", "capi-workloads/ap-south-1")
    assert code == 0
    assert out.startswith(GATED), out
    lines = [line.strip() for line in out.splitlines() if line.startswith("  ")]
    assert lines and all(": matches" in line or "does not match" in line for line in lines)
    code, out, _ = run_cli(capsys, *argv, "--cluster", "capi-workloads/ap-south-1", "-o", "json")
    explained = json.loads(out)
    assert explained["deployed"] is False
    assert explained["held"].startswith("the cluster is gated: ControlPlaneNotInitialized")
    assert [t["matched"] for t in explained["targets"]] != []


LONG_NAME = "a-bundle-whose-name-is-longer-than-helms-fifty-three-characters"


def test_render_and_explain_show_the_release_name_the_helm_release_gets(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    body = BUNDLE.replace("name: app,", f"name: {LONG_NAME},").replace(
        '"${ cluster.labels.tier }"', "gold"
    )
    (tmp_path / "in.yaml").write_text(CLUSTERS + "---" + body)
    items = render_json(capsys, tmp_path)
    shown = {
        i["spec"]["options"]["helm"]["releaseName"]
        for i in items
        if i["kind"] == "BundleDeployment"
    }
    given = {i["spec"]["releaseName"] for i in items if i["kind"] == "HelmRelease"}
    assert len(given) == 1 and shown == given
    (name,) = given
    assert len(name) == 53 and name != LONG_NAME[:53]  # shortened with its hash
    argv = ("explain", "-f", str(tmp_path), "--bundle", f"ws/{LONG_NAME}", "--cluster", "ws/a")
    code, out, _ = run_cli(capsys, *argv, "-o", "json")
    assert code == 0 and json.loads(out)["options"]["helm"]["releaseName"] == name
