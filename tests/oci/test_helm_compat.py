"""Compatibility with Helm itself (its Go SDK through helm-python-sdk), proven both ways.

Helm pulls and renders what bundler pushed; bundler pulls what Helm pushed (Helm puts no title
annotation on the layer); Helm and bundler package the same files for a chart with a .helmignore.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from bundler.oci import package, registry
from bundler.oci.reference import parse_location, parse_repository
from bundler.oci.repository import oci_chart_versions
from tests.oci.conftest import MakeChart, RunCli
from tests.registry_fixtures import LocalRegistry

helm = pytest.importorskip("helm_python", reason="helm-python-sdk (Helm's Go SDK) is not installed")

PLAIN = registry.RegistryOptions(plain_http=True, timeout=10)


def _names(archive: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        return sorted(member.name for member in tar.getmembers() if member.isfile())


def test_helm_pulls_and_renders_what_bundler_pushed(
    oci_registry: LocalRegistry, make_chart: MakeChart, repo_path: str, tmp_path: Path
) -> None:
    archive = package.build_archive(make_chart("demo", "1.2.3+build.5"))
    registry.push_chart(archive, parse_location(oci_registry.oci(repo_path)), PLAIN)

    ref = oci_registry.oci(f"{repo_path}/demo")
    with helm.RegistryClient(
        plain_http=True, credentials_file=tmp_path / "helm-registry.json"
    ) as client:
        assert client.tags(ref) == ["1.2.3+build.5"]
    downloads = tmp_path / "helm-pulled"
    downloads.mkdir()
    helm.pull(ref, version="1.2.3+build.5", destination=downloads, plain_http=True)
    pulled = downloads / "demo-1.2.3+build.5.tgz"
    assert pulled.read_bytes() == archive.data

    with helm.Chart.load(pulled) as chart:
        assert (chart.name, chart.version) == ("demo", "1.2.3+build.5")
        manifests = chart.render(values={"greeting": "hi"}, name="rel")
    assert 'greeting: "hi"' in manifests["demo/templates/configmap.yaml"]
    assert "name: rel-config" in manifests["demo/templates/configmap.yaml"]


def test_bundler_pulls_what_helm_pushed(
    oci_registry: LocalRegistry,
    make_chart: MakeChart,
    run_cli: RunCli,
    repo_path: str,
    tmp_path: Path,
) -> None:
    helm_tgz = Path(
        helm.package(make_chart("fromhelm", "0.4.0+meta.1"), destination=tmp_path / "helm-out")
    )
    helm.push(helm_tgz, oci_registry.oci(repo_path), plain_http=True)

    repository = parse_repository(oci_registry.oci(f"{repo_path}/fromhelm"))
    assert oci_chart_versions(repository, PLAIN) == ["0.4.0+meta.1"]
    pulled = registry.pull_chart(repository.tagged("0.4.0_meta.1"), PLAIN)
    assert pulled.archive == helm_tgz.read_bytes()
    assert pulled.chart_yaml["version"] == "0.4.0+meta.1"

    result = run_cli(
        "pull",
        repository.url,
        "--version",
        "0.4.0+meta.1",
        "--untar",
        "-d",
        str(tmp_path),
        "--plain-http",
    )
    assert result.code == 0, result.stderr
    assert (tmp_path / "fromhelm" / "templates" / "configmap.yaml").is_file()


def test_helm_and_bundler_package_the_same_files(make_chart: MakeChart, tmp_path: Path) -> None:
    chart_dir = make_chart(
        files={
            ".helmignore": "*.tgz\nci/\n/NOTES.md\ndocs/*.txt\n",
            "old-0.9.0.tgz": "x",
            "ci/values-test.yaml": "a: 1\n",
            "NOTES.md": "top",
            "docs/NOTES.md": "kept",
            "docs/skip.txt": "dropped",
            "templates/.scratch.yaml": "hidden",
            "templates/NOTES.txt": "kept",
        }
    )
    helm_tgz = Path(helm.package(chart_dir, destination=tmp_path / "helm-out"))
    assert _names(package.build_archive(chart_dir).data) == _names(helm_tgz.read_bytes())
