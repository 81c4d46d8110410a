"""tests/schemas.validate: strict CRD validation that every test of emitted objects relies on."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import schemas


def helm_release(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "podinfo", "namespace": "bundler-system", "labels": {"a": "b"}},
        "spec": {
            "interval": "10m",
            "chart": {
                "spec": {"chart": "podinfo", "sourceRef": {"kind": "HelmRepository", "name": "p"}}
            },
            **spec,
        },
    }


def test_accepts_a_minimal_helm_release() -> None:
    schemas.validate(helm_release())


@pytest.mark.parametrize(
    "obj",
    [
        {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": "c"}},
        {
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "kind": "Cluster",
            "metadata": {"name": "c"},
            "spec": {"topology": {"classRef": {"name": "quick"}, "version": "v1.31.0"}},
        },
        {
            "apiVersion": "source.toolkit.fluxcd.io/v1",
            "kind": "OCIRepository",
            "metadata": {"name": "p"},
            "spec": {"url": "oci://r.example/p", "interval": "5m", "ref": {"tag": "1.0.0_b"}},
        },
    ],
    ids=["capi-v1beta1", "capi-v1beta2", "oci-repository"],
)
def test_accepts_other_served_kinds(obj: dict[str, Any]) -> None:
    schemas.validate(obj)


def _without_interval() -> dict[str, Any]:
    obj = helm_release()
    del obj["spec"]["interval"]
    return obj


def _with_metadata(**metadata: Any) -> dict[str, Any]:
    obj = helm_release()
    obj["metadata"] = metadata
    return obj


_CHART_REF = {"kind": "OCIRepository", "name": "p"}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (helm_release(intervall="5m"), "spec: Additional properties are not allowed ('intervall'"),
        (
            helm_release(install={"remediaton": {"retries": 3}}),
            "spec.install: Additional properties are not allowed ('remediaton'",
        ),
        ({**helm_release(), "extra": 1}, "<root>: Additional properties are not allowed ('extra'"),
        (
            helm_release(driftDetection={"mode": "on"}),
            "spec.driftDetection.mode: 'on' is not one of",
        ),
        (_without_interval(), "spec: 'interval' is a required property"),
        (
            helm_release(chart={"spec": {"chart": "podinfo"}}),
            "spec.chart.spec: 'sourceRef' is a required property",
        ),
        (helm_release(interval="10 minutes"), "spec.interval: '10 minutes' does not match"),
        (helm_release(maxHistory="5"), "spec.maxHistory: '5' is not of type 'integer'"),
        (
            helm_release(valuesFrom=[{"kind": "Secret"}]),
            "spec.valuesFrom[0]: 'name' is a required property",
        ),
        (helm_release(chartRef=_CHART_REF), "spec: either chart or chartRef must be set"),
        (helm_release(kubeConfig={}), "spec.kubeConfig: exactly one of"),
        (_with_metadata(namespace="x"), "metadata: 'name' is a required property"),
        (_with_metadata(name="Podinfo"), "metadata.name: 'Podinfo' does not match"),
        (_with_metadata(name="a" * 254), "metadata.name: 'aaaa"),
        (_with_metadata(name="p", labels={"k": "v" * 64}), "metadata.labels.k: 'vvvv"),
        (_with_metadata(name="p", labels={"-k": "v"}), "metadata.labels: '-k' does not match"),
        (_with_metadata(name="p", labels={"k": 1}), "metadata.labels.k: 1 is not of type 'string'"),
    ],
    ids=[
        "unknown-field",
        "unknown-nested-field",
        "unknown-root-field",
        "wrong-enum",
        "missing-required-field",
        "missing-nested-required-field",
        "pattern",
        "wrong-type",
        "missing-required-in-list-item",
        "cel-chart-and-chartref",
        "cel-kubeconfig-needs-a-ref",
        "metadata-name-required",
        "metadata-name-not-dns1123",
        "metadata-name-too-long",
        "label-value-too-long",
        "label-key-malformed",
        "label-value-not-a-string",
    ],
)
def test_rejects_invalid_objects(obj: dict[str, Any], expected: str) -> None:
    with pytest.raises(AssertionError) as caught:
        schemas.validate(obj)
    assert expected in str(caught.value)
    assert "HelmRelease" in str(caught.value)


def test_reports_every_violation_at_once() -> None:
    with pytest.raises(AssertionError) as caught:
        schemas.validate(helm_release(intervall="5m", maxHistory="5"))
    assert "intervall" in str(caught.value)
    assert "spec.maxHistory" in str(caught.value)


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ({"kind": "HelmRelease"}, "no string apiVersion/kind"),
        ({"apiVersion": "helm.toolkit.fluxcd.io/v2beta1", "kind": "HelmRelease"}, "no served CRD"),
        (
            {"apiVersion": "example.com/v1", "kind": "Widget"},
            "HelmRelease helm.toolkit.fluxcd.io/v2",
        ),
    ],
    ids=["no-api-version", "version-not-served", "unknown-kind"],
)
def test_rejects_kinds_without_a_schema(obj: dict[str, Any], expected: str) -> None:
    with pytest.raises(AssertionError, match=expected):
        schemas.validate(obj)


@pytest.mark.parametrize(
    "api_version_kind",
    [
        k
        for k in schemas.served_kinds()
        if k[0].split("/")[0] in {"helm.toolkit.fluxcd.io", "source.toolkit.fluxcd.io"}
        or k[0].startswith("cluster.x-k8s.io/")
    ],
    ids=lambda k: f"{k[1]}-{k[0]}",
)
def test_every_flux_and_capi_rule_is_evaluated(api_version_kind: tuple[str, str]) -> None:
    assert schemas.unsupported_rules(*api_version_kind) == []


# A small CRD exercising the Kubernetes extensions, loaded through the directory override.
_WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"kind": "Widget", "plural": "widgets"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1alpha1",
                "served": False,
                "storage": False,
                "schema": {"openAPIV3Schema": {}},
            },
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "apiVersion": {"type": "string"},
                            "kind": {"type": "string"},
                            "metadata": {"type": "object"},
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "size": {
                                        "anyOf": [{"type": "integer"}, {"type": "string"}],
                                        "x-kubernetes-int-or-string": True,
                                    },
                                    "note": {"type": "string", "nullable": True},
                                    "mode": {
                                        "type": "string",
                                        "enum": ["a", "b"],
                                        "nullable": True,
                                    },
                                    "tags": {
                                        "type": "array",
                                        "items": {"type": "string"},
                                        "x-kubernetes-list-type": "set",
                                    },
                                    "ports": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "properties": {
                                                "name": {"type": "string"},
                                                "port": {"type": "integer"},
                                            },
                                        },
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["name"],
                                    },
                                    "free": {
                                        "type": "object",
                                        "x-kubernetes-preserve-unknown-fields": True,
                                    },
                                    "phase": {
                                        "type": "string",
                                        "x-kubernetes-validations": [
                                            {"rule": "!(self in ['Ready','Done'])"},
                                            {
                                                "rule": "self.matches('^[a-z]+$')",
                                                "message": "phase must be lowercase letters",
                                            },
                                        ],
                                    },
                                    "window": {
                                        "type": "object",
                                        "properties": {"from": {"type": "string"}},
                                        "x-kubernetes-validations": [
                                            {"rule": "self.missing == 'x' || self.from == 'now'"},
                                            {"rule": "duration(self.from) > duration('1s')"},
                                        ],
                                    },
                                },
                            },
                        },
                    }
                },
            },
        ],
    },
}


@pytest.fixture
def widget_schemas(tmp_path: Path) -> Path:
    (tmp_path / "example").mkdir()
    (tmp_path / "example" / "widgets.yaml").write_text(yaml.safe_dump(_WIDGET_CRD))
    return tmp_path


def widget(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": spec,
    }


@pytest.mark.parametrize(
    "spec",
    [
        {"size": 3},
        {"size": "50%"},
        {"note": None, "mode": None},
        {"mode": "a"},
        {"tags": ["x", "y"]},
        {"ports": [{"name": "http", "port": 80}, {"name": "https", "port": 80}]},
        {"free": {"anything": {"goes": [1]}}},
        {"phase": "running"},
        {"window": {"from": "now"}},
    ],
    ids=[
        "int-or-string-int",
        "int-or-string-string",
        "nullable-null",
        "nullable-enum-value",
        "list-set-unique",
        "list-map-unique-keys",
        "preserve-unknown-fields",
        "cel-rules-hold",
        "cel-or-absorbs-error-and-unsupported-rule-skipped",
    ],
)
def test_kubernetes_extensions_accept(widget_schemas: Path, spec: dict[str, Any]) -> None:
    schemas.validate(widget(**spec), widget_schemas)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"size": 1.5}, "spec.size: 1.5 is not of type 'integer', 'string'"),
        ({"mode": "c"}, "spec.mode: 'c' is not one of ['a', 'b', None]"),
        ({"tags": ["x", "x"]}, "spec.tags: item 1 duplicates"),
        ({"ports": [{"name": "a"}, {"name": "a", "port": 1}]}, "spec.ports: item 1 duplicates map"),
        ({"phase": "Ready"}, "spec.phase: failed rule: !(self in ['Ready','Done'])"),
        ({"phase": "run-1"}, "spec.phase: phase must be lowercase letters"),
        ({"window": {"from": "later"}}, "spec.window: rule \"self.missing == 'x' || self."),
        ({"window": {"from": "later"}}, "failed to evaluate: no such key: missing"),
    ],
    ids=[
        "int-or-string-float",
        "enum",
        "list-set-duplicate",
        "list-map-duplicate-key",
        "cel-in-list",
        "cel-matches-with-message",
        "cel-error-when-no-operand-holds",
        "cel-error-names-the-missing-field",
    ],
)
def test_kubernetes_extensions_reject(
    widget_schemas: Path, spec: dict[str, Any], expected: str
) -> None:
    with pytest.raises(AssertionError) as caught:
        schemas.validate(widget(**spec), widget_schemas)
    assert expected in str(caught.value)


def test_unsupported_rules_are_listed(widget_schemas: Path) -> None:
    assert schemas.unsupported_rules("example.com/v1", "Widget", widget_schemas) == [
        "duration(self.from) > duration('1s')"
    ]


def test_validate_does_not_modify_the_object() -> None:
    obj = helm_release(values={"a": None})
    before = copy.deepcopy(obj)
    schemas.validate(obj)
    assert obj == before
