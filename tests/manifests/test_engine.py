"""Helm's engine as bundler finds and calls it: the same objects as Helm's own SDK renders."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.errors import BundlerError, TemplateError
from bundler.manifests.engine import (
    INSTALL_HINT,
    BinaryEngine,
    ReleaseInput,
    SdkEngine,
    find_engine,
)
from bundler.oci.package import package
from tests.support.helm_repository import write_chart

helm = pytest.importorskip("helm_python", reason="helm-python-sdk (Helm's Go SDK) is not installed")

CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
"""
NOTES = "installed {{ .Release.Name }}\n"
HELPERS = '{{- define "demo.name" -}}demo{{- end -}}\n'


def archive(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    chart = write_chart(tmp_path / "src", "demo", "1.0.0", files)
    path, _ = package(chart, tmp_path / "out")
    return path


def objects(text: str) -> list[Any]:
    return [doc for doc in yaml.safe_load_all(text) if doc]


def test_the_sdk_engine_renders_what_helm_renders_for_the_same_release(tmp_path: Path) -> None:
    chart = archive(tmp_path, {"templates/NOTES.txt": NOTES, "templates/_helpers.tpl": HELPERS})
    values = {"greeting": "hi"}
    rendered = SdkEngine().render(ReleaseInput(chart, "rel", "apps", values, include_crds=False))
    with helm.Chart.load(chart) as loaded:
        expected = loaded.render(values=values, name="rel", namespace="apps")
    expected_objects = [
        doc
        for name in sorted(expected)
        if name.endswith(".yaml")
        for doc in objects(expected[name])
    ]
    assert objects(rendered) == expected_objects
    assert objects(rendered)[0]["metadata"] == {"name": "rel-config", "namespace": "apps"}


def test_the_kube_version_is_the_clusters_when_known(tmp_path: Path) -> None:
    release = ReleaseInput(archive(tmp_path), "rel", "apps", kube_version="v1.29.4")
    (cm,) = objects(SdkEngine().render(release))
    assert cm["data"]["kube"] == "v1.29.4"


def test_without_a_kube_version_helms_default_applies(tmp_path: Path) -> None:
    chart = archive(tmp_path)
    (cm,) = objects(SdkEngine().render(ReleaseInput(chart, "rel", "apps")))
    with helm.Chart.load(chart) as loaded:
        (default,) = objects(loaded.render(name="rel")["demo/templates/configmap.yaml"])
    assert cm["data"]["kube"] == default["data"]["kube"]


@pytest.mark.parametrize(
    ("include", "kinds"),
    [(True, ["CustomResourceDefinition", "ConfigMap"]), (False, ["ConfigMap"])],
    ids=["crds-first", "crds-skipped"],
)
def test_crds_come_first_unless_skipped(tmp_path: Path, include: bool, kinds: list[str]) -> None:
    chart = archive(tmp_path, {"crds/widget.yaml": CRD})
    release = ReleaseInput(chart, "rel", "apps", include_crds=include)
    assert [obj["kind"] for obj in objects(SdkEngine().render(release))] == kinds


def test_a_failing_template_is_a_template_error_with_helms_message(tmp_path: Path) -> None:
    chart = archive(
        tmp_path, {"templates/configmap.yaml": '{{ required "greeting is required" .Values.nope }}'}
    )
    with pytest.raises(TemplateError, match="greeting is required"):
        SdkEngine().render(ReleaseInput(chart, "rel", "apps"))


def test_without_the_sdk_a_helm_binary_on_path_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = tmp_path / "bin" / "helm"
    binary.parent.mkdir()
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setitem(sys.modules, "helm_python", None)  # import helm_python fails
    monkeypatch.setenv("PATH", str(binary.parent))
    engine = find_engine()
    assert isinstance(engine, BinaryEngine) and engine.binary == str(binary)


def test_without_the_sdk_or_a_helm_binary_the_error_says_how_to_get_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "helm_python", None)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BundlerError) as raised:
        find_engine()
    assert raised.value.message == INSTALL_HINT
    assert "pip install helm-python-sdk" in INSTALL_HINT


def test_the_sdk_is_preferred_when_installed() -> None:
    assert isinstance(find_engine(), SdkEngine)


@pytest.mark.skipif(shutil.which("helm") is None, reason="no helm binary on PATH")
def test_a_helm_binary_renders_what_the_sdk_renders(tmp_path: Path) -> None:
    chart = archive(tmp_path, {"crds/widget.yaml": CRD, "templates/NOTES.txt": NOTES})
    release = ReleaseInput(chart, "rel", "apps", {"greeting": "hi"}, kube_version="v1.29.4")
    binary = BinaryEngine(shutil.which("helm") or "helm")
    assert objects(binary.render(release)) == objects(SdkEngine().render(release))
