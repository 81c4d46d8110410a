"""`--manifests` for a Kustomize BundleDeployment: the artifact pulled from a real registry
(docker-registry on 127.0.0.1), built by kubectl's kustomize as kustomize-controller builds it,
with the cluster's postBuild substitutions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bundler.api.kustomize import KustomizeOptions
from bundler.errors import BundlerError, InvalidInputError
from bundler.manifests.kustomize_build import KustomizeBuilder
from bundler.oci import artifact_archive, artifacts
from bundler.oci.artifact_layout import Origin
from bundler.oci.reference import parse_repository
from bundler.oci.registry import RegistryOptions
from tests.support.git_server import GitServer
from tests.support.registry_fixtures import LocalRegistry

CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  cluster: ${cluster_name}
  tier: ${tier:=bronze}
"""
KEPT = """apiVersion: v1
kind: ConfigMap
metadata:
  name: literal
  annotations:
    kustomize.toolkit.fluxcd.io/substitute: disabled
data:
  text: ${cluster_name}
"""
COMPONENT = """apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources: [extra.yaml]
"""
EXTRA = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\ndata: {a: b}\n"


def _push(registry: LocalRegistry, tmp_path: Path, path: str) -> str:
    """A source of plain manifests in apps/ (no kustomization file) and a component."""
    root = tmp_path / "manifests"
    (root / "apps").mkdir(parents=True)
    (root / "apps" / "settings.yaml").write_text(CONFIGMAP)
    (root / "apps" / "literal.yaml").write_text(KEPT)
    (root / "components" / "extra").mkdir(parents=True)
    (root / "components" / "extra" / "kustomization.yaml").write_text(COMPONENT)
    (root / "components" / "extra" / "extra.yaml").write_text(EXTRA)
    tag = parse_repository(registry.oci(path)).tagged("1.0.0")
    artifacts.push_artifact(
        artifact_archive.pack(root), tag, RegistryOptions(plain_http=True), origin=Origin()
    )
    return registry.oci(path)


def _options(url: str, **fields: Any) -> KustomizeOptions:
    return KustomizeOptions.model_validate(
        {"source": {"oci": {"url": url, "tag": "1.0.0"}}, "path": "apps", **fields}
    )


def _build(options: KustomizeOptions) -> dict[str, dict[str, Any]]:
    built = KustomizeBuilder(60).build(options, RegistryOptions(plain_http=True), "BD ws/app")
    return {obj["metadata"]["name"]: obj for obj in built}


def test_a_directory_of_plain_manifests_is_built_with_the_clusters_substitutions(
    oci_registry: LocalRegistry, tmp_path: Path
) -> None:
    url = _push(oci_registry, tmp_path, "t/kustomize-plain")
    built = _build(
        _options(url, targetNamespace="apps", postBuild={"substitute": {"cluster_name": "edge-1"}})
    )
    assert sorted(built) == ["literal", "settings"]
    assert built["settings"]["data"] == {"cluster": "edge-1", "tier": "bronze"}
    assert built["settings"]["metadata"]["namespace"] == "apps"
    assert built["literal"]["data"] == {"text": "${cluster_name}"}


def test_patches_and_components_are_laid_over_the_path(
    oci_registry: LocalRegistry, tmp_path: Path
) -> None:
    url = _push(oci_registry, tmp_path, "t/kustomize-overlay")
    patch = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  extra: yes\n"
    built = _build(
        _options(
            url,
            components=["../components/extra"],
            patches=[{"patch": patch, "target": {"kind": "ConfigMap", "name": "settings"}}],
        )
    )
    assert sorted(built) == ["extra", "literal", "settings"]
    assert built["settings"]["data"]["extra"] in ("yes", True)


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        pytest.param(
            {"source": {"git": {"url": "http://127.0.0.1:9/app.git", "ref": {"semver": "1.x"}}}},
            "semver range is resolved by source-controller",
            id="git-semver",
        ),
        pytest.param({"path": "../.."}, "leaves the source", id="path-leaves-the-source"),
        pytest.param({"path": "nowhere"}, "not a directory", id="path-missing"),
        pytest.param(
            {"postBuild": {"substitute": {"bad-name": "x"}}}, "bad-name", id="bad-variable"
        ),
    ],
)
def test_bad_options_name_the_deployment_and_the_field(
    oci_registry: LocalRegistry, tmp_path: Path, fields: dict[str, Any], says: str
) -> None:
    url = _push(oci_registry, tmp_path, "t/kustomize-bad")
    with pytest.raises(InvalidInputError, match=says) as raised:
        _build(_options(url, **fields))
    assert str(raised.value).startswith("BD ws/app")


def test_a_failing_build_is_that_deployments_error(
    oci_registry: LocalRegistry, tmp_path: Path
) -> None:
    url = _push(oci_registry, tmp_path, "t/kustomize-failing")
    broken = "- op: replace\n  path: /data/nowhere/deeper\n  value: x\n"
    patches = [{"patch": broken, "target": {"kind": "ConfigMap", "name": "settings"}}]
    with pytest.raises(BundlerError, match="kustomize build failed") as raised:
        _build(_options(url, patches=patches))
    assert str(raised.value).startswith("BD ws/app")


def test_a_git_source_is_checked_out_at_its_branch(git_server: GitServer) -> None:
    git_server.create(
        "fleet", {"apps/settings.yaml": CONFIGMAP, "apps/literal.yaml": KEPT, "README": "x"}
    )
    options = KustomizeOptions.model_validate(
        {
            "source": {"git": {"url": git_server.url("fleet"), "ref": {"branch": "main"}}},
            "path": "apps",
            "postBuild": {"substitute": {"cluster_name": "edge-2", "tier": "gold"}},
        }
    )
    built = _build(options)
    assert built["settings"]["data"] == {"cluster": "edge-2", "tier": "gold"}


def test_a_git_source_that_does_not_answer_names_the_url(git_server: GitServer) -> None:
    options = KustomizeOptions.model_validate(
        {"source": {"git": {"url": git_server.url("missing"), "ref": {"branch": "main"}}}}
    )
    with pytest.raises(InvalidInputError, match=r"missing\.git") as raised:
        _build(options)
    assert str(raised.value).startswith("BD ws/app: spec.options.kustomize.source.git:")
