"""Scenario 1: bundler's CRDs on a real kube-apiserver: accepted as structural schemas, served
with their printer columns, explained with their descriptions."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e.environment import ROOT, Environment
from tests.support.e2e.tenancy import Tenancy

CRD_DIRECTORIES = [ROOT / "crds", ROOT / "charts" / "bundler" / "crds"]


def _crd_files() -> list[Path]:
    files = sorted(path for directory in CRD_DIRECTORIES for path in directory.glob("*.yaml"))
    assert files, "no CRD files found"
    return files


@pytest.mark.parametrize("path", _crd_files(), ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_crd_installs_as_a_structural_schema(e2e_env: Environment, path: Path) -> None:
    management = e2e_env.management
    management.kubectl("apply", "--server-side", "--dry-run=server", "-f", str(path))
    name = management.kubectl("get", "-f", str(path), "-o", "name").stdout.strip()
    crd = management.get(name.split("/", 1)[0], name.split("/", 1)[1])
    assert crd is not None
    conditions = {c["type"]: c for c in crd["status"]["conditions"]}
    assert conditions["Established"]["status"] == "True"
    assert conditions["NamesAccepted"]["status"] == "True"
    assert "NonStructuralSchema" not in conditions, conditions.get("NonStructuralSchema")


def test_kubectl_get_shows_the_printer_columns(tenancy: Tenancy) -> None:
    tenancy.apply(
        {
            "apiVersion": "bundler.dev/v1alpha1",
            "kind": "Bundle",
            "metadata": {"name": "columns"},
            "spec": {
                "helm": {"repo": "oci://127.0.0.1:1/charts", "chart": "c", "version": "1.0.0"}
            },
        }
    )
    shown = tenancy.management.kubectl("get", "bundles", "-n", tenancy.workspace).stdout
    header = shown.splitlines()[0].split()
    assert header == ["NAME", "READY", "STATE", "VERSION", "GATE", "AGE"], shown
    assert shown.splitlines()[1].split()[0] == "columns"
    every_kind = tenancy.management.kubectl("get", "bundler", "-n", tenancy.workspace).stdout
    assert "bundle.bundler.dev/columns" in every_kind


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("bundles.spec.targets", "clusterSelector"),
        ("bundles.spec.helm.version", "DESCRIPTION"),
        ("clusters.spec.agentMode", "DESCRIPTION"),
    ],
    ids=["bundle-targets", "bundle-helm-version", "cluster-agent-mode"],
)
def test_kubectl_explain_finds_descriptions(
    e2e_env: Environment, field: str, expected: str
) -> None:
    explained = e2e_env.management.kubectl(
        "explain", field, "--api-version=bundler.dev/v1alpha1"
    ).stdout
    assert expected in explained
    description = explained.split("DESCRIPTION:", 1)[1].split("FIELD", 1)[0].strip()
    assert description and "<empty>" not in description, explained
