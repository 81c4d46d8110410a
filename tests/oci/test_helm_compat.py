"""Compatibility with Helm itself (its Go SDK through helm-python-sdk), proven both ways.

Helm pulls and renders what bundler pushed; bundler pulls what Helm pushed (Helm puts no title
annotation on the layer); Helm and bundler package the same files for a chart with a .helmignore.
Real-world chart shapes built here (Helm 2's apiVersion v1 with requirements.yaml, `v` versions,
`+build` versions, dependencies as directories, archives and library charts, library charts
themselves) are packaged as Helm packages them and render the same once pulled; a dependency
missing from charts/ is refused by both; `--version`/`--app-version` give what `helm package`
gives; the manifest carries the annotations `helm push` writes (but the clock's).
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
import requests

from bundler.errors import InvalidInputError
from bundler.oci import chart, layout, package, registry
from bundler.oci.reference import parse_location, parse_repository
from bundler.oci.repository import oci_chart_versions
from tests.support.oci.chart_fixtures import MakeChart, RunCli
from tests.support.registry_fixtures import LocalRegistry

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


CM_TEMPLATE = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-{{ .Chart.Name }}\n"
    "data:\n  version: {{ .Chart.Version | quote }}\n  greeting: {{ .Values.greeting | quote }}\n"
)
LIBRARY_TEMPLATE = (
    '{{- define "lib.configmap" -}}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n'
    "  name: {{ .Release.Name }}-from-lib\n{{- end }}\n"
)


def _subchart_archive(name: str) -> str:
    """A packaged subchart, as text Path.write_text keeps byte for byte (latin-1)."""
    with_files = {
        "Chart.yaml": f"apiVersion: v2\nname: {name}\nversion: 1.0.0\n",
        "templates/cm.yaml": CM_TEMPLATE,
        "values.yaml": "greeting: from-subchart\n",
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for relative, text in with_files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}/{relative}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue().decode("latin-1")


# Real-world chart shapes: (Chart.yaml, other files).
SHAPES: dict[str, tuple[str, dict[str, str]]] = {
    "helm2-apiversion-v1": (
        "apiVersion: v1\nname: shape\nversion: 0.1.0\nappVersion: '1.0'\n",
        {
            "requirements.yaml": "dependencies:\n- {name: db, version: 1.0.0}\n",
            "charts/db/Chart.yaml": "apiVersion: v1\nname: db\nversion: 1.0.0\n",
            "charts/db/templates/cm.yaml": CM_TEMPLATE,
        },
    ),
    "v-prefixed-version": ("apiVersion: v2\nname: shape\nversion: v3.28.2\n", {}),
    "build-metadata-version": ("apiVersion: v2\nname: shape\nversion: 1.2.3+build.7\n", {}),
    "dependencies-directory-archive-library": (
        "apiVersion: v2\nname: shape\nversion: 2.0.0\ndependencies:\n"
        "- {name: lib, version: 0.1.0}\n- {name: db, version: 1.x, alias: database}\n",
        {
            "charts/lib/Chart.yaml": "apiVersion: v2\nname: lib\nversion: 0.1.0\ntype: library\n",
            "charts/lib/templates/_cm.tpl": LIBRARY_TEMPLATE,
            "charts/db-1.0.0.tgz": _subchart_archive("db"),
            "templates/from-lib.yaml": '{{ include "lib.configmap" . }}\n',
        },
    ),
    "library-chart": (
        "apiVersion: v2\nname: shape\nversion: 0.3.0\ntype: library\n",
        {"templates/_helpers.tpl": LIBRARY_TEMPLATE},
    ),
}


def _write_shape(make_chart: MakeChart, shape: str) -> Path:
    chart_yaml, files = SHAPES[shape]
    root = make_chart("shape", files={"Chart.yaml": chart_yaml, "templates/cm.yaml": CM_TEMPLATE})
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("latin-1"))
    return root


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_helm_reads_every_chart_shape_bundler_pushed(
    oci_registry: LocalRegistry,
    make_chart: MakeChart,
    repo_path: str,
    tmp_path: Path,
    shape: str,
) -> None:
    root = _write_shape(make_chart, shape)
    helm_tgz = Path(helm.package(root, destination=tmp_path / "helm-out"))
    archive = package.build_archive(root)

    def own_files(data: bytes) -> list[str]:  # Helm unpacks archived subcharts: compare renders
        return [name for name in _names(data) if not name.startswith("shape/charts/")]

    assert own_files(archive.data) == own_files(helm_tgz.read_bytes())
    assert archive.filename == helm_tgz.name

    pushed = registry.push_chart(archive, parse_location(oci_registry.oci(repo_path)), PLAIN)
    version = archive.metadata.version
    assert pushed.reference.tag == version.replace("+", "_")
    downloads = tmp_path / "helm-pulled"
    downloads.mkdir()
    ref = oci_registry.oci(f"{repo_path}/shape")
    helm.pull(ref, version=version, destination=downloads, plain_http=True)
    pulled = downloads / archive.filename
    assert pulled.read_bytes() == archive.data

    values = {"greeting": "hi"}
    with helm.Chart.load(pulled) as ours, helm.Chart.load(helm_tgz) as helms:
        assert (ours.name, ours.version) == ("shape", version)
        assert ours.render(values=values, name="rel") == helms.render(values=values, name="rel")


@pytest.mark.parametrize(
    ("chart_yaml", "files"),
    [
        ("apiVersion: v2\nname: shape\nversion: 1.0.0\ndependencies:\n- {name: db}\n", {}),
        (
            "apiVersion: v1\nname: shape\nversion: 1.0.0\n",
            {"requirements.yaml": "dependencies:\n- {name: db}\n"},
        ),
    ],
    ids=["chart-yaml", "requirements-yaml"],
)
def test_missing_dependencies_are_refused_as_helm_refuses_them(
    make_chart: MakeChart, tmp_path: Path, chart_yaml: str, files: dict[str, str]
) -> None:
    root = make_chart("shape", files={"Chart.yaml": chart_yaml, **files})
    with pytest.raises(helm.HelmChartInvalidError) as helms:
        helm.package(root, destination=tmp_path / "helm-out")
    with pytest.raises(InvalidInputError) as ours:
        package.build_archive(root)
    assert "missing in charts/ directory: db" in str(helms.value)
    assert "missing in charts/ directory: db" in str(ours.value)


@pytest.mark.parametrize(
    ("version", "app_version"),
    [("2.0.0", None), ("v2.0.0+build.1", "9.9"), (None, "1.2.3")],
    ids=["version", "v-version-and-app-version", "app-version"],
)
def test_version_overrides_match_helm_package(
    make_chart: MakeChart, tmp_path: Path, version: str | None, app_version: str | None
) -> None:
    root = make_chart("demo", "1.0.0", files={"Chart.yaml": VERSIONED})
    helm_tgz = Path(
        helm.package(
            root, destination=tmp_path / "helm-out", version=version, app_version=app_version
        )
    )
    target, _ = package.package(
        root, tmp_path / "ours", chart.Overrides(version=version, app_version=app_version)
    )
    assert target.name == helm_tgz.name
    with helm.Chart.load(target) as ours, helm.Chart.load(helm_tgz) as helms:
        assert (ours.name, ours.version) == (helms.name, helms.version)
        assert ours.render(values={}, name="rel") == helms.render(values={}, name="rel")


VERSIONED = (
    "apiVersion: v2\nname: demo\nversion: 1.0.0\nappVersion: '0.1'\ndescription: d\n"
    "home: https://example.com/home\nsources: [https://example.com/src, https://example.com/b]\n"
    "maintainers:\n- {name: Ann, email: ann@example.com}\n- {name: Bob}\n"
    "annotations:\n  org.opencontainers.image.url: https://example.com/override\n"
    "  org.opencontainers.image.title: not-the-name\n  example.com/team: platform\n"
)


def test_manifest_annotations_are_the_ones_helm_writes(
    oci_registry: LocalRegistry, make_chart: MakeChart, repo_path: str, tmp_path: Path
) -> None:
    root = make_chart("demo", "1.0.0", files={"Chart.yaml": VERSIONED})
    registry.push_chart(
        package.build_archive(root), parse_location(oci_registry.oci(f"{repo_path}/b")), PLAIN
    )
    helm_tgz = Path(helm.package(root, destination=tmp_path / "helm-out"))
    helm.push(helm_tgz, oci_registry.oci(f"{repo_path}/h"), plain_http=True)

    def annotations(path: str) -> dict[str, str]:
        response = requests.get(
            f"{oci_registry.base_url}/v2/{path}/demo/manifests/1.0.0",
            headers={"Accept": layout.MANIFEST_MEDIA_TYPE},
            timeout=10,
        )
        response.raise_for_status()
        found: dict[str, str] = response.json()["annotations"]
        return found

    helms = annotations(f"{repo_path}/h")
    assert helms.pop("org.opencontainers.image.created")  # the clock: bundler leaves it out
    assert annotations(f"{repo_path}/b") == helms
    assert helms["org.opencontainers.image.authors"] == "Ann (ann@example.com), Bob"
