"""`bundler import fleet`: Fleet repositories built here, in Fleet's layout, imported as Bundles
that `bundler render` reads, and whose per-cluster values are what Fleet's documented semantics
give; the charts kept in them pushed to the local registry; everything else listed with FILE:LINE.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.oci.reference import parse_repository
from bundler.oci.registry import RegistryOptions, pull_chart
from tests.support.cli_helpers import run_cli
from tests.support.registry_fixtures import LocalRegistry

pytestmark = pytest.mark.usefixtures("docker_config")

CHART = {
    "Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n",
    "values.yaml": "replicas: 1\n",
    "templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
    "  name: {{ .Release.Name }}\ndata:\n  replicas: {{ .Values.replicas | quote }}\n",
}
WEB_FLEET_YAML = """\
defaultNamespace: web
helm:
  chart: ./chart
  releaseName: web
  values:
    region: "${ .ClusterLabels.region }"
    host: "web-${ .ClusterName }.example.com"
    replicas: ${ .ClusterValues.replicas }
    env: global.fleet.clusterLabels.env
    os: '${ index .ClusterLabels "kubernetes.io/os" }'
    tier: '${ default "standard" .ClusterValues.tier }'
  valuesFiles:
    - values-common.yaml
targetCustomizations:
  - name: prod
    clusterSelector:
      matchLabels: {env: prod}
    helm:
      values:
        replicas: 5
        monitoring: {enabled: true}
  - name: edge
    clusterGroup: edge
    namespace: web-edge
    helm:
      values:
        monitoring: {interval: 30s}
"""
VALUES_COMMON = "replicas: 2\ncommon: true\nmonitoring: {enabled: false, interval: 60s}\n"
CACHE_FLEET_YAML = """\
namespace: cache
helm:
  repo: https://charts.example.com
  chart: cache
  version: 2.x
  values: {size: small}
correctDrift: {enabled: true}
"""
GITREPO = """\
apiVersion: fleet.cattle.io/v1alpha1
kind: GitRepo
metadata: {name: shop, namespace: fleet-default}
spec:
  repo: https://git.example.com/shop
  branch: main
  paths: [apps]
  targets:
    - name: eu
      clusterSelector: {matchLabels: {region: eu}}
    - name: edge-group
      clusterGroup: edge
---
apiVersion: fleet.cattle.io/v1alpha1
kind: ClusterGroup
metadata: {name: edge, namespace: fleet-default}
spec:
  selector: {matchLabels: {tier: edge}}
"""
CLUSTERS = """\
apiVersion: bundler.dev/v1alpha1
kind: ClusterGroup
metadata: {name: edge, namespace: fleet-default}
spec: {selector: {matchLabels: {tier: edge}}}
"""
# name: (labels, spec.values): Fleet's labels and templateValues of each cluster.
FLEET = {
    "eu-prod": (
        {"region": "eu", "env": "prod", "kubernetes.io/os": "linux"},
        {"replicas": 3, "tier": "gold"},
    ),
    "eu-dev": (
        {"region": "eu", "env": "dev", "kubernetes.io/os": "linux"},
        {"replicas": 1, "tier": ""},
    ),
    "us-prod": ({"region": "us", "env": "prod", "kubernetes.io/os": "linux"}, {"replicas": 1}),
    "edge-us": (
        {"region": "us", "env": "dev", "tier": "edge", "kubernetes.io/os": "windows"},
        {"replicas": 1, "tier": "silver"},
    ),
    "edge-eu": (
        {"region": "eu", "env": "prod", "tier": "edge", "kubernetes.io/os": "linux"},
        {"replicas": 1, "tier": "bronze"},
    ),
}
# What Fleet's documented semantics give each cluster for apps/web: the GitRepo's targets select
# (us-prod matches the prod customization, but no GitRepo target: nothing), the first matching
# customization customizes, values files are merged over values, templates read the cluster.
EXPECTED_WEB: dict[str, tuple[str, dict[str, Any]]] = {
    "eu-prod": (
        "web",
        {
            "region": "eu",
            "host": "web-eu-prod.example.com",
            "replicas": 5,
            "env": "prod",
            "os": "linux",
            "tier": "gold",
            "common": True,
            "monitoring": {"enabled": True, "interval": "60s"},
        },
    ),
    "eu-dev": (
        "web",
        {
            "region": "eu",
            "host": "web-eu-dev.example.com",
            "replicas": 2,
            "env": "dev",
            "os": "linux",
            "tier": "standard",
            "common": True,
            "monitoring": {"enabled": False, "interval": "60s"},
        },
    ),
    "edge-us": (
        "web-edge",
        {
            "region": "us",
            "host": "web-edge-us.example.com",
            "replicas": 2,
            "env": "dev",
            "os": "windows",
            "tier": "silver",
            "common": True,
            "monitoring": {"enabled": False, "interval": "30s"},
        },
    ),
    "edge-eu": (
        "web",
        {
            "region": "eu",
            "host": "web-edge-eu.example.com",
            "replicas": 5,
            "env": "prod",
            "os": "linux",
            "tier": "bronze",
            "common": True,
            "monitoring": {"enabled": True, "interval": "60s"},
        },
    ),
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def fleet_repository(root: Path) -> Path:
    """A repository in Fleet's layout: a bundle of a chart kept in it, one of a chart from a Helm
    repository, and a directory of plain manifests (a bundle of its own, which bundler cannot
    deploy)."""
    files = {
        "apps/web/fleet.yaml": WEB_FLEET_YAML,
        "apps/web/values-common.yaml": VALUES_COMMON,
        "apps/cache/fleet.yaml": CACHE_FLEET_YAML,
        "apps/raw/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: raw}\n",
        **{f"apps/web/chart/{k}": v for k, v in CHART.items()},
    }
    return write_tree(root, files)


def clusters_file(path: Path) -> Path:
    docs = [yaml.safe_load(CLUSTERS)]
    for name, (labels, values) in FLEET.items():
        docs.append(
            {
                "apiVersion": "bundler.dev/v1alpha1",
                "kind": "Cluster",
                "metadata": {"name": name, "namespace": "fleet-default", "labels": labels},
                "spec": {"values": values},
            }
        )
    path.write_text(yaml.safe_dump_all(docs))
    return path


def test_a_fleet_repository_renders_the_values_fleet_gives(
    capsys: pytest.CaptureFixture[str], oci_registry: LocalRegistry, tmp_path: Path
) -> None:
    repo = fleet_repository(tmp_path / "repo")
    gitrepo = write_tree(tmp_path, {"gitrepo.yaml": GITREPO}) / "gitrepo.yaml"
    location = oci_registry.oci("fleet-import")
    out = tmp_path / "bundles"
    code, stdout, stderr = run_cli(
        capsys,
        "import", "fleet", str(repo), "--gitrepo", str(gitrepo),
        "--push-charts", location, "-o", str(out),
    )  # fmt: skip
    assert code == 1, stderr  # the manifests of apps/raw are listed as not converted
    assert stdout == ""
    assert f"pushed: {location}/web:1.0.0" in stderr
    assert (
        f"not converted: {repo}/apps/fleet.yaml:1: the bundle in apps is a directory of "
        "manifests, not a Helm chart" in stderr
    )
    assert f"note: {repo}/apps/web/fleet.yaml" not in stderr  # nothing else to say about web
    assert "import: 2 Bundles written, 1 Fleet bundle not converted" in stderr
    assert sorted(p.name for p in out.iterdir()) == ["shop-apps-cache.yaml", "shop-apps-web.yaml"]

    web = yaml.safe_load((out / "shop-apps-web.yaml").read_text())
    assert web["spec"]["helm"]["repo"] == location
    assert (web["spec"]["helm"]["chart"], web["spec"]["helm"]["version"]) == ("web", "1.0.0")
    pulled = pull_chart(
        parse_repository(f"{location}/web").tagged("1.0.0"), RegistryOptions(plain_http=True)
    )
    assert pulled.chart_yaml["name"] == "web"

    code, stdout, stderr = run_cli(
        capsys, "render", "-f", str(out), "-f", str(clusters_file(tmp_path / "clusters.yaml")),
        "-o", "json",
    )  # fmt: skip
    assert code == 0, stderr
    items = json.loads(stdout)["items"]
    by_bundle: dict[str, dict[str, tuple[str, Any]]] = {}
    for item in items:
        labels = item["metadata"]["labels"]
        options = item["spec"]["options"]
        by_bundle.setdefault(labels["bundler.dev/bundle-name"], {})[
            labels["bundler.dev/cluster-name"]
        ] = (options["namespace"], options["helm"]["values"])
    assert by_bundle["shop-apps-web"] == EXPECTED_WEB
    assert sorted(by_bundle["shop-apps-cache"]) == ["edge-eu", "edge-us", "eu-dev", "eu-prod"]
    cache = next(
        i for i in items if i["metadata"]["labels"]["bundler.dev/bundle-name"] == "shop-apps-cache"
    )
    assert cache["spec"]["options"]["helm"]["driftDetection"] == {"mode": "enabled"}


@pytest.mark.parametrize(
    ("files", "args", "code", "fragments"),
    [
        (
            {
                "web/fleet.yaml": "helm: {chart: ./chart}\n",
                "web/chart/Chart.yaml": CHART["Chart.yaml"],
            },
            [],
            1,
            [
                "not converted: REPO/web/fleet.yaml:1: helm.chart: a chart kept in the "
                "repository (REPO/web/chart): pass --push-charts oci://REGISTRY/PATH",
                "import: 0 Bundles written, 1 Fleet bundle not converted",
            ],
        ),
        (
            {
                "web/fleet.yaml": "helm:\n  repo: https://c.example\n  chart: web\n"
                "  values: {v: '${ if .ClusterName }x${ end }'}\n"
            },
            [],
            1,
            [
                "not converted: REPO/web/fleet.yaml:4: helm.values.v: Fleet template not converted",
                "note: REPO: --gitrepo: no GitRepo given: the bundles are named repo-PATH",
                "import: 1 Bundle written; 1 thing not converted",
            ],
        ),
        (
            {
                "web/fleet.yaml": "helm:\n  repo: https://c.example\n  chart: web\n"
                "  valuesFiles: [x.yaml]\n"
            },
            [],
            2,
            ["error: REPO/web/fleet.yaml:4: no values file x.yaml"],
        ),
        (
            {"web/fleet.yaml": "defaultNamespace: web\nhelm: [not, a, mapping]\n"},
            [],
            2,
            ["error: REPO/web/fleet.yaml:2: helm: must be a mapping"],
        ),
        ({"README.md": "nothing here"}, [], 2, ["error: REPO: no Fleet bundle in this directory"]),
    ],
    ids=[
        "chart-without-push-charts",
        "template-not-converted",
        "missing-values-file",
        "bad-helm",
        "no-bundle",
    ],
)
def test_what_cannot_be_converted_is_said(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    files: dict[str, str],
    args: list[str],
    code: int,
    fragments: list[str],
) -> None:
    repo = write_tree(tmp_path / "repo", files)
    result = run_cli(capsys, "import", "fleet", str(repo), *args)
    assert result.code == code, result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment.replace("REPO", str(repo)) in result.stderr, result.stderr


def test_bundles_go_to_stdout_ready_for_render(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    repo = write_tree(
        tmp_path / "repo",
        {
            "fleet.yaml": "helm:\n  repo: https://c.example\n  chart: web\n  version: 1.0.0\n"
            "  values: {name: '${ .ClusterName }'}\n",
        },
    )
    result = run_cli(capsys, "import", "fleet", str(repo))
    assert result.code == 0, result.stderr
    (bundle,) = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert bundle["metadata"] == {"name": "repo", "namespace": "fleet-default"}
    assert bundle["spec"]["targets"] == [{"name": "default", "clusterGroup": "default"}]
    (tmp_path / "bundle.yaml").write_text(result.stdout)
    group = (
        "apiVersion: bundler.dev/v1alpha1\nkind: ClusterGroup\n"
        "metadata: {name: default, namespace: fleet-default}\nspec: {selector: {}}\n---\n"
        "apiVersion: bundler.dev/v1alpha1\nkind: Cluster\n"
        "metadata: {name: c1, namespace: fleet-default}\n"
    )
    (tmp_path / "fleet.yaml").write_text(group)
    rendered = run_cli(
        capsys, "render", "-f", str(tmp_path / "bundle.yaml"), "-f", str(tmp_path / "fleet.yaml"),
        "-o", "json",
    )  # fmt: skip
    assert rendered.code == 0, rendered.stderr
    (item,) = json.loads(rendered.stdout)["items"]
    assert item["spec"]["options"]["helm"]["values"] == {"name": "c1"}


def test_a_changed_chart_under_a_pushed_version_is_not_overwritten(
    capsys: pytest.CaptureFixture[str], oci_registry: LocalRegistry, tmp_path: Path
) -> None:
    files = {
        "web/fleet.yaml": "helm: {chart: ./chart}\n",
        **{f"web/chart/{k}": v for k, v in CHART.items()},
    }
    repo = write_tree(tmp_path / "repo", files)
    location = oci_registry.oci("fleet-import-taken")
    first = run_cli(capsys, "import", "fleet", str(repo), "--push-charts", location)
    assert first.code == 0, first.stderr
    (repo / "web/chart/values.yaml").write_text("replicas: 7\n")
    second = run_cli(capsys, "import", "fleet", str(repo), "--push-charts", location)
    assert second.code == 1
    assert "the tag already holds a different chart" in second.stderr
    assert "give the chart a new version" in second.stderr
