"""Fleet's Go-template values read and written as bundler's: the conversions keep Fleet's meaning
(each rendered here against what Fleet's documented semantics give), the rest is refused saying
what; a template error on Fleet's syntax says so; `global.fleet.clusterLabels.X` is warned about."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.bundle import Bundle
from bundler.core.templating import TemplateContext, render_values
from bundler.core.templating.gotemplate import (
    NotConvertibleError,
    bundle_label_warnings,
    convert,
    fleet_syntax_hint,
)
from bundler.errors import TemplateError

CONTEXT = TemplateContext(
    cluster_name="edge-1",
    cluster_namespace="fleet-default",
    cluster_labels={"env": "prod", "kubernetes.io/os": "linux", "empty": ""},
    cluster_annotations={"owner": "team-a"},
    cluster_values={"replicas": 3, "a": {"b": "deep"}, "list": [1, 2], "if": "kw"},
    bundle_name="web",
    bundle_namespace="fleet-default",
)


def rendered(template: str) -> Any:
    return render_values({"v": template}, CONTEXT)["v"]


# (id, Fleet's text, bundler's, the value Fleet's semantics give for CONTEXT)
CONVERSIONS: list[tuple[str, str, str, Any]] = [
    ("label", "${ .ClusterLabels.env }", "${ ClusterLabels.env }", "prod"),
    ("root-dollar", "${ $.ClusterValues.a.b }", "${ ClusterValues.a.b }", "deep"),
    (
        "name-in-text",
        "web-${ .ClusterName }.example",
        "web-${ ClusterName }.example",
        "web-edge-1.example",
    ),
    ("namespace", "${ .ClusterNamespace }", "${ ClusterNamespace }", "fleet-default"),
    ("annotation", "${ .ClusterAnnotations.owner }", "${ ClusterAnnotations.owner }", "team-a"),
    ("number-keeps-type", "${ .ClusterValues.replicas }", "${ ClusterValues.replicas }", 3),
    (
        "index-with-dots",
        '${ index .ClusterLabels "kubernetes.io/os" }',
        "${ ClusterLabels['kubernetes.io/os'] }",
        "linux",
    ),
    ("index-two-keys", '${ index .ClusterValues "a" "b" }', "${ ClusterValues['a']['b'] }", "deep"),
    ("keyword-key", "${ .ClusterValues.if }", "${ ClusterValues['if'] }", "kw"),
    (
        "get-missing-is-empty",
        '${ get .ClusterLabels "zone" }',
        "${ ClusterLabels['zone'] | default('') }",
        "",
    ),
    (
        "default-of-empty",
        '${ default "dev" .ClusterLabels.empty }',
        "${ ClusterLabels.empty | default('dev', true) }",
        "dev",
    ),
    (
        "default-piped",
        '${ .ClusterLabels.env | default "dev" }',
        "${ ClusterLabels.env | default('dev', true) }",
        "prod",
    ),
    (
        "quote-whole-is-a-string",
        "${ .ClusterValues.replicas | quote }",
        "${ ClusterValues.replicas | string }",
        "3",
    ),
    (
        "quote-in-text-keeps-quotes",
        "name=${ .ClusterName | quote }",
        "name=${ ClusterName | tojson }",
        'name="edge-1"',
    ),
    (
        "upper-then-quote",
        "${ .ClusterLabels.env | upper | quote }",
        "${ (ClusterLabels.env | upper) | string }",
        "PROD",
    ),
    (
        "to-json-whole-keeps-structure",
        "${ toJson .ClusterValues.list }",
        "${ ClusterValues.list }",
        [1, 2],
    ),
    ("to-yaml-piped", "${ .ClusterValues.a | toYaml }", "${ ClusterValues.a }", {"b": "deep"}),
    (
        "replace",
        '${ replace "-" "_" .ClusterName }',
        "${ ClusterName | replace('-', '_') }",
        "edge_1",
    ),
    ("dollar-before-action", "$${ .ClusterName }", "${ '$' }${ ClusterName }", "$edge-1"),
    (
        "no-template",
        "plain {{ .Values.helm }}",
        "plain {{ .Values.helm }}",
        "plain {{ .Values.helm }}",
    ),
]


@pytest.mark.parametrize(
    ("fleet", "ours", "value"), [c[1:] for c in CONVERSIONS], ids=[c[0] for c in CONVERSIONS]
)
def test_common_forms_convert_with_fleets_meaning(fleet: str, ours: str, value: Any) -> None:
    assert convert(fleet) == ours
    assert rendered(ours) == value


NOT_CONVERTIBLE = [
    ("if", '${ if eq .ClusterLabels.env "prod" }3${ else }1${ end }', "`if` has no conversion"),
    ("range", "${ range .ClusterValues.list }x${ end }", "`range` has no conversion"),
    ("variable", "${ $x := 1 }", "variables have no conversion"),
    ("unknown-name", "${ .Values.x }", ".Values is not in Fleet's template context"),
    ("other-function", '${ printf "%s" .ClusterName }', "the function 'printf'"),
    ("trimming", "${- .ClusterName }", "whitespace trimming"),
    ("unclosed", "${ .ClusterName", "without a closing }"),
    ("to-yaml-in-text", "a: ${ toYaml .ClusterValues.a }", "toYaml inside other text"),
]


@pytest.mark.parametrize(
    ("fleet", "why"), [c[1:] for c in NOT_CONVERTIBLE], ids=[c[0] for c in NOT_CONVERTIBLE]
)
def test_other_forms_are_refused_saying_what(fleet: str, why: str) -> None:
    with pytest.raises(NotConvertibleError, match=why):
        convert(fleet)


@pytest.mark.parametrize(
    ("template", "hint"),
    [
        ("${ .ClusterLabels.name }", "in bundler write ${ ClusterLabels.name }"),
        (
            '${ index .ClusterLabels "k8s.io/os" }',
            "in bundler write ${ ClusterLabels['k8s.io/os'] }",
        ),
        ('${ default "x" .ClusterLabels.zone }', "${ ClusterLabels.zone | default('x', true) }"),
        (
            '${ if eq .ClusterLabels.env "prod" }3${ end }',
            "in bundler write ${ ClusterLabels.name } (no leading dot",
        ),
    ],
    ids=["field", "index", "default", "not-convertible"],
)
def test_a_template_error_on_fleet_syntax_says_so(template: str, hint: str) -> None:
    with pytest.raises(TemplateError) as raised:
        render_values({"v": template}, CONTEXT)
    message = str(raised.value)
    assert "values.v: " in message
    assert "this is Go-template syntax as in Fleet; " in message
    assert hint in message


@pytest.mark.parametrize(
    "template",
    ["${ cluster.labels.missing }", "${ not cluster.labels.missing }", "${ 1 + }", "plain"],
    ids=["undefined", "jinja-not", "jinja-syntax", "no-template"],
)
def test_bundlers_own_errors_get_no_fleet_hint(template: str) -> None:
    assert fleet_syntax_hint(template) is None


def test_fleet_label_substitution_is_warned_about() -> None:
    bundle = Bundle.model_validate(
        {
            "apiVersion": "bundler.dev/v1alpha1",
            "kind": "Bundle",
            "metadata": {"name": "web", "namespace": "ws"},
            "spec": {
                "helm": {
                    "chart": "web",
                    "values": {"region": "global.fleet.clusterLabels.region", "x": ["ok"]},
                },
                "targets": [
                    {
                        "clusterSelector": {},
                        "helm": {"values": {"z": [{"o": "global.fleet.clusterLabels.k8s.io/os"}]}},
                    }
                ],
            },
        }
    )
    assert bundle_label_warnings(bundle) == [
        "spec.helm.values.region: 'global.fleet.clusterLabels.region' is Fleet's cluster label "
        "substitution, which bundler does not do (the value is this text); write "
        "${ ClusterLabels.region | default('') }",
        "spec.targets[0].helm.values.z[0].o: 'global.fleet.clusterLabels.k8s.io/os' is Fleet's "
        "cluster label substitution, which bundler does not do (the value is this text); write "
        "${ ClusterLabels['k8s.io/os'] | default('') }",
    ]
