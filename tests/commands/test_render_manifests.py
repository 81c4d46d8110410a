"""`bundler render --manifests`: every cluster's chart rendered by Helm's engine, compared with
what Helm's own SDK renders for the same release, from a loopback Helm repository and the local
registry."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.oci import package, registry
from bundler.oci.reference import parse_location
from tests.support.cli_helpers import run_cli
from tests.support.commands.chart_fleet import (
    KUBE_VERSION,
    bundle,
    cluster,
    helm_repo,
    write_fleet,
)
from tests.support.helm_repository import ENDLESS_LOOP, HUGE_STRING, HelmRepository, write_chart
from tests.support.registry_fixtures import LocalRegistry

__all__ = ["helm_repo"]
pytestmark = pytest.mark.usefixtures("docker_config")

helm = pytest.importorskip("helm_python", reason="helm-python-sdk (Helm's Go SDK) is not installed")

CLUSTERS = [cluster("plain", {"env": "dev"}), cluster("capi", {"env": "prod"}, KUBE_VERSION)]
GREETING = {"greeting": "hello ${ cluster.name }"}
Obj = dict[str, Any]


def render_items(capsys: pytest.CaptureFixture[str], fleet: Path, cache: Path) -> list[Obj]:
    code, out, err = run_cli(
        capsys, "render", "-f", str(fleet), "--manifests", "--cache-dir", str(cache), "-o", "json"
    )
    assert code == 0, err
    items: list[Obj] = json.loads(out)["items"]
    return items


def helm_objects(archive: Path, values: Obj, name: str, namespace: str) -> list[Obj]:
    """What Helm's own SDK renders for the release."""
    with helm.Chart.load(archive) as chart:
        rendered = chart.render(values=values, name=name, namespace=namespace)
    return [doc for key in sorted(rendered) for doc in yaml.safe_load_all(rendered[key]) if doc]


def without_cluster_annotation(obj: Obj) -> Obj:
    annotations = dict(obj["metadata"]["annotations"])
    annotations.pop("bundler.dev/cluster")
    metadata = {k: v for k, v in obj["metadata"].items() if k != "annotations"}
    return {
        **obj,
        "metadata": {**metadata, **({"annotations": annotations} if annotations else {})},
    }


def test_charts_from_a_helm_repository_render_as_helm_renders_them(
    capsys: pytest.CaptureFixture[str], helm_repo: HelmRepository, tmp_path: Path
) -> None:
    archive = helm_repo.publish(write_chart(tmp_path / "src", "web", "1.0.0"))
    fleet = write_fleet(
        tmp_path / "fleet.yaml", *CLUSTERS, bundle("web", helm_repo.url, "web", "1.0.0", GREETING)
    )
    items = render_items(capsys, fleet, tmp_path / "cache")
    assert [
        (i["kind"], i["metadata"].get("annotations", {}).get("bundler.dev/cluster")) for i in items
    ] == [
        ("BundleDeployment", None),
        ("ConfigMap", "ws/capi"),
        ("BundleDeployment", None),
        ("ConfigMap", "ws/plain"),
    ]
    plain = without_cluster_annotation(items[3])
    assert [plain] == helm_objects(archive, {"greeting": "hello plain"}, "web", "apps")
    assert items[1]["data"] == {"greeting": "hello capi", "kube": KUBE_VERSION}


def test_charts_from_the_registry_render_as_helm_renders_them(
    capsys: pytest.CaptureFixture[str], oci_registry: LocalRegistry, tmp_path: Path
) -> None:
    archive = package.build_archive(write_chart(tmp_path / "src", "ociweb", "2.1.0"))
    location = oci_registry.oci("render-manifests")
    registry.push_chart(
        archive, parse_location(location), registry.RegistryOptions(plain_http=True)
    )
    fleet = write_fleet(
        tmp_path / "fleet.yaml",
        CLUSTERS[0],
        bundle("ociweb", location, "ociweb", "2.1.0", GREETING),
    )
    items = render_items(capsys, fleet, tmp_path / "cache")
    tgz = tmp_path / "ociweb.tgz"
    tgz.write_bytes(archive.data)
    assert [without_cluster_annotation(items[1])] == helm_objects(
        tgz, {"greeting": "hello plain"}, "ociweb", "apps"
    )


VALUES_TEMPLATE = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: values}\ndata:\n"
    "  all: {{ toJson .Values | quote }}\n"
)
VALUES_FILES = {
    "values.yaml": "greeting: hello\nsize: small\ntier: {name: base, level: 1}\n",
    "values-prod.yaml": "size: large\ntier: {level: 2}\n",
    "templates/configmap.yaml": VALUES_TEMPLATE,
}


@pytest.mark.parametrize("where", ["https", "oci"])
@pytest.mark.parametrize(
    ("values_files", "ignore_missing", "expected"),
    [
        (
            ["values.yaml", "values-prod.yaml"],
            False,
            {"greeting": "hi", "size": "large", "tier": {"name": "base", "level": 2}},
        ),
        (["values-prod.yaml"], False, {"greeting": "hi", "size": "large", "tier": {"level": 2}}),
        (
            ["values.yaml", "values-missing.yaml"],
            True,
            {"greeting": "hi", "size": "small", "tier": {"name": "base", "level": 1}},
        ),
    ],
    ids=["chart-defaults-then-prod", "prod-in-place-of-defaults", "missing-file-left-out"],
)
def test_values_files_inside_the_chart_are_merged_before_the_values(
    capsys: pytest.CaptureFixture[str],
    helm_repo: HelmRepository,
    oci_registry: LocalRegistry,
    tmp_path: Path,
    where: str,
    values_files: list[str],
    ignore_missing: bool,
    expected: Obj,
) -> None:
    chart_dir = write_chart(tmp_path / "src", "vf", "1.0.0", VALUES_FILES)
    if where == "https":
        repo = helm_repo.url
        helm_repo.publish(chart_dir)
    else:
        repo = oci_registry.oci("render-values-files")  # the same chart each time
        registry.push_chart(
            package.build_archive(chart_dir),
            parse_location(repo),
            registry.RegistryOptions(plain_http=True),
        )
    doc = bundle("vf", repo, "vf", "1.0.0", {"greeting": "hi"})
    doc["spec"]["helm"]["valuesFiles"] = values_files
    if ignore_missing:
        doc["spec"]["helm"]["ignoreMissingValuesFiles"] = True
    fleet = write_fleet(tmp_path / "fleet.yaml", CLUSTERS[0], doc)
    items = render_items(capsys, fleet, tmp_path / "cache")
    assert json.loads(items[1]["data"]["all"]) == expected


def test_a_values_file_the_chart_lacks_fails_that_cluster(
    capsys: pytest.CaptureFixture[str], helm_repo: HelmRepository, tmp_path: Path
) -> None:
    helm_repo.publish(write_chart(tmp_path / "src", "vf", "1.0.0", VALUES_FILES))
    doc = bundle("vf", helm_repo.url, "vf", "1.0.0")
    doc["spec"]["helm"]["valuesFiles"] = ["values-staging.yaml"]
    fleet = write_fleet(tmp_path / "fleet.yaml", CLUSTERS[0], doc)
    code, _, err = run_cli(
        capsys, "render", "-f", str(fleet), "--manifests", "--cache-dir", str(tmp_path / "c")
    )
    assert code == 1
    assert "valuesFiles: the chart has no values-staging.yaml" in err


def test_a_version_range_is_resolved_before_the_chart_is_fetched(
    capsys: pytest.CaptureFixture[str], helm_repo: HelmRepository, tmp_path: Path
) -> None:
    for version in ("1.0.0", "1.2.0", "2.0.0"):
        helm_repo.publish(write_chart(tmp_path / "src", "web", version))
    fleet = write_fleet(
        tmp_path / "fleet.yaml", CLUSTERS[0], bundle("web", helm_repo.url, "web", "1.*")
    )
    bd, _ = render_items(capsys, fleet, tmp_path / "cache")
    assert bd["spec"]["options"]["helm"]["version"] == "1.2.0"
    assert helm_repo.requests["/web-1.2.0.tgz"] == 1


def test_a_chart_that_fails_for_one_cluster_leaves_the_others_rendered(
    capsys: pytest.CaptureFixture[str], helm_repo: HelmRepository, tmp_path: Path
) -> None:
    template = (
        "kind: ConfigMap\napiVersion: v1\nmetadata: {name: c}\ndata:\n"
        '  v: {{ required "size is required" .Values.size | quote }}\n'
    )
    helm_repo.publish(
        write_chart(tmp_path / "src", "strict", "1.0.0", {"templates/configmap.yaml": template})
    )
    sized = bundle(
        "strict",
        helm_repo.url,
        "strict",
        "1.0.0",
        targets=[
            {"clusterSelector": {"matchLabels": {"env": "prod"}}, "helm": {"values": {"size": 3}}},
            {"clusterSelector": {}},
        ],
    )
    fleet = write_fleet(tmp_path / "fleet.yaml", *CLUSTERS, sized)
    code, out, err = run_cli(
        capsys, "render", "-f", str(fleet), "--manifests", "--cache-dir", str(tmp_path / "c")
    )
    assert code == 1
    kinds = [(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(out) if d]
    assert kinds == [
        ("BundleDeployment", "strict"),
        ("ConfigMap", "c"),
        ("BundleDeployment", "strict"),
    ]
    assert err.count("error:") == 1
    assert "on cluster ws/plain" in err and "size is required" in err


def test_without_helms_engine_render_manifests_says_how_to_get_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "helm_python", None)
    monkeypatch.setenv("PATH", str(tmp_path))
    fleet = write_fleet(tmp_path / "fleet.yaml", CLUSTERS[0])
    code, out, err = run_cli(capsys, "render", "-f", str(fleet), "--manifests")
    assert (code, out) == (1, "")
    assert "pip install helm-python-sdk" in err and "helm binary on PATH" in err


# A short --render-timeout only where nothing else renders (the endless loop never ends, so any
# timeout stops it); with other charts to render, a timeout far beyond any load, so the memory
# limit (an allocation, not a time) is what stops the runaway, and the others always finish.
@pytest.mark.parametrize(
    ("template", "timeout", "with_others", "bound"),
    [
        (
            ENDLESS_LOOP,
            "2",
            False,
            "rendering took longer than the --render-timeout of 2s; stopped it",
        ),
        (
            HUGE_STRING,
            "300",
            True,
            "rendering needed more than the --render-memory limit of 512 MiB; stopped it",
        ),
    ],
    ids=["endless-loop-hits-the-timeout", "huge-string-hits-the-memory-limit"],
)
def test_a_runaway_chart_is_one_error_line_naming_the_chart_and_the_bound(
    capsys: pytest.CaptureFixture[str],
    helm_repo: HelmRepository,
    tmp_path: Path,
    template: str,
    timeout: str,
    with_others: bool,
    bound: str,
) -> None:
    helm_repo.publish(
        write_chart(tmp_path / "src", "runaway", "1.0.0", {"templates/runaway.yaml": template})
    )
    helm_repo.publish(write_chart(tmp_path / "src", "web", "1.0.0"))
    others = [bundle("web", helm_repo.url, "web", "1.0.0", GREETING)] if with_others else []
    fleet = write_fleet(
        tmp_path / "fleet.yaml",
        CLUSTERS[0],
        bundle("runaway", helm_repo.url, "runaway", "1.0.0"),
        *others,
    )
    code, out, err = run_cli(
        capsys,
        *("render", "-f", str(fleet), "--manifests", "--cache-dir", str(tmp_path / "c")),
        *("--render-timeout", timeout, "--render-memory", "512"),
    )
    assert code == 1
    assert err.splitlines() == [
        f"error: BundleDeployment ws/runaway: chart runaway 1.0.0 from {helm_repo.url} "
        f"on cluster ws/plain: {bound}"
    ]
    kinds = [d["kind"] for d in yaml.safe_load_all(out) if d]
    expected = ["BundleDeployment", "BundleDeployment", "ConfigMap"] if with_others else []
    assert kinds == (expected or ["BundleDeployment"])


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--render-timeout", "0", "--render-timeout: must be positive, got 0"),
        ("--render-timeout", "nan", "--render-timeout: must be a finite number of seconds"),
        ("--render-memory", "100", "--render-memory: must be at least 256 MiB"),
        ("--render-memory", "2G", "--render-memory: '2G' is not a whole number of MiB"),
    ],
    ids=["timeout-zero", "timeout-nan", "memory-too-small", "memory-not-a-number"],
)
def test_bad_render_bounds_are_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str, value: str, message: str
) -> None:
    fleet = write_fleet(tmp_path / "fleet.yaml", CLUSTERS[0])
    with pytest.raises(SystemExit) as exited:
        run_cli(capsys, "render", "-f", str(fleet), "--manifests", flag, value)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
