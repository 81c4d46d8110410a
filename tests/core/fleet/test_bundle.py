"""One fleet.yaml (and its GitRepo) as a Bundle: every field Fleet has an equivalent for, mapped
to it with Fleet's meaning; everything else listed with FILE:LINE, never dropped silently."""

from __future__ import annotations

from typing import Any

import pytest

from bundler import yamlload
from bundler.core.fleet.bundle import (
    BundleSource,
    Chart,
    GitRepo,
    Imported,
    convert_bundle,
    local_chart,
)
from bundler.core.fleet.notes import Located
from bundler.errors import InvalidInputError

CHART = "helm: {repo: https://charts.example.com, chart: web, version: 1.2.3}\n"
GITREPO = GitRepo(name="apps", namespace="fleet-default")


def located(text: str, source: str = "repo/web/fleet.yaml") -> Located:
    (doc,) = yamlload.load_all(text, source)
    return Located(source, doc.body if doc.body is not None else {}, doc.line, doc.lines)


def convert(
    text: str,
    *,
    gitrepo: GitRepo = GITREPO,
    files: dict[str, str] | None = None,
    charts: dict[str, Chart] | None = None,
    path: str = "web",
) -> Imported:
    source = BundleSource(
        path=path,
        fleet=located(text),
        values_files={
            name: located(body, f"repo/web/{name}") for name, body in (files or {}).items()
        },
        local_charts=charts or {},
    )
    return convert_bundle(source, gitrepo)


def spec(imported: Imported) -> dict[str, Any]:
    assert imported.document is not None, [str(n) for n in imported.notes.items]
    found: dict[str, Any] = imported.document["spec"]
    return found


def notes(imported: Imported) -> list[str]:
    return [str(n) for n in imported.notes.items]


# (id, fleet.yaml, spec.helm fields expected, other spec fields expected)
HELM_CASES: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
    (
        "chart-from-a-helm-repository",
        CHART,
        {"repo": "https://charts.example.com", "chart": "web", "version": "1.2.3"},
        {"namespace": "default"},
    ),
    (
        "oci-chart-reference",
        "helm: {chart: 'oci://ghcr.io/acme/charts/web', version: '1.x'}\n",
        {"repo": "oci://ghcr.io/acme/charts", "chart": "web", "version": "1.x"},
        {},
    ),
    (
        "no-version-is-the-latest",
        "helm: {repo: https://charts.example.com, chart: web}\n",
        {"chart": "web"},
        {},
    ),
    (
        "release-name",
        "helm: {repo: https://c.example, chart: web, releaseName: front}\n",
        {"releaseName": "front"},
        {},
    ),
    (
        "helm-flags-as-flux-settings",
        "helm: {repo: https://c.example, chart: web, force: true, atomic: true, "
        "timeoutSeconds: 600, maxHistory: 3, skipSchemaValidation: true}\n",
        {
            "upgrade": {
                "force": True,
                "remediation": {"remediateLastFailure": True, "strategy": "rollback"},
                "disableTakeOwnership": True,
                "disableSchemaValidation": True,
            },
            "install": {
                "remediation": {"remediateLastFailure": True},
                "disableTakeOwnership": True,
                "disableSchemaValidation": True,
            },
            "timeout": "600s",
            "maxHistory": 3,
        },
        {},
    ),
    (
        "take-ownership-is-flux-default",
        "helm: {repo: https://c.example, chart: web, takeOwnership: true}\n",
        {"install": None, "upgrade": None},
        {},
    ),
    (
        "disable-pre-process",
        "helm: {repo: https://c.example, chart: web, disablePreProcess: true, "
        "values: {a: '${ .ClusterName }'}}\n",
        {"disableTemplating": True, "values": {"a": "${ .ClusterName }"}},
        {},
    ),
    (
        "namespace-over-default-namespace",
        "defaultNamespace: dflt\nnamespace: forced\n" + CHART,
        {},
        {"namespace": "forced"},
    ),
    ("default-namespace", "defaultNamespace: dflt\n" + CHART, {}, {"namespace": "dflt"}),
    (
        "correct-drift-and-compare-patches",
        CHART + "correctDrift: {enabled: true}\ndiff:\n  comparePatches:\n"
        "  - {apiVersion: apps/v1, kind: Deployment, name: web, namespace: w,\n"
        "     operations: [{op: remove, path: /spec/replicas}], jsonPointers: [/spec/x]}\n"
        "  - {apiVersion: v1, kind: Service, operations: [{op: remove, path: /spec/ports}]}\n",
        {
            "driftDetection": {
                "mode": "enabled",
                "ignore": [
                    {
                        "paths": ["/spec/x", "/spec/replicas"],
                        "target": {
                            "group": "apps",
                            "version": "v1",
                            "kind": "Deployment",
                            "name": "web",
                            "namespace": "w",
                        },
                    },
                    {"paths": ["/spec/ports"], "target": {"version": "v1", "kind": "Service"}},
                ],
            }
        },
        {},
    ),
    (
        "bundle-level-fields",
        CHART + "keepResources: true\npaused: true\nlabels: {team: a}\n"
        "dependsOn: [{name: apps-db}]\n"
        "rolloutStrategy: {maxUnavailable: 10%, autoPartitionSize: 2}\n",
        {},
        {
            "keepResources": True,
            "paused": True,
            "dependsOn": [{"name": "apps-db"}],
            "rolloutStrategy": {"maxUnavailable": "10%", "autoPartitionSize": 2},
        },
    ),
]


@pytest.mark.parametrize(
    ("text", "helm", "others"), [c[1:] for c in HELM_CASES], ids=[c[0] for c in HELM_CASES]
)
def test_fields_with_an_equivalent(text: str, helm: dict[str, Any], others: dict[str, Any]) -> None:
    converted = spec(convert(text))
    for key, value in helm.items():
        assert converted["helm"].get(key) == value, key
    for key, value in others.items():
        assert converted.get(key) == value, key


def test_names_are_fleets() -> None:
    plain = convert(CHART, path="apps/web")
    assert plain.name == "apps-apps-web"
    assert plain.document is not None
    assert plain.document["metadata"] == {"name": "apps-apps-web", "namespace": "fleet-default"}
    assert "releaseName" not in plain.document["spec"]["helm"]
    renamed = convert("name: front\n" + CHART, path="apps/web")
    assert renamed.name == "front"
    assert spec(renamed)["helm"]["releaseName"] == "apps-apps-web"  # Fleet keeps GITREPO-PATH


def test_values_files_are_merged_over_values_in_order() -> None:
    text = CHART.replace("}", ", values: {a: 1, b: {x: 1}}, valuesFiles: [one.yaml, two.yaml]}")
    converted = convert(
        text,
        files={"one.yaml": "b: {y: 2}\nc: one\n", "two.yaml": "c: two\nd: '${ .ClusterName }'\n"},
    )
    assert spec(converted)["helm"]["values"] == {
        "a": 1,
        "b": {"x": 1, "y": 2},
        "c": "two",
        "d": "${ ClusterName }",
    }


def test_a_missing_values_file_names_the_line() -> None:
    text = "helm:\n  repo: https://c.example\n  chart: web\n  valuesFiles:\n    - gone.yaml\n"
    with pytest.raises(InvalidInputError, match=r"repo/web/fleet.yaml:5: no values file gone.yaml"):
        convert(text)


def test_template_values_replace_top_level_keys() -> None:
    text = (
        "helm:\n  repo: https://c.example\n  chart: web\n  values: {replicas: 1, keep: k}\n"
        "  templateValues:\n    replicas: '${ .ClusterValues.replicas }'\n    plain: '3'\n"
        "    structure: 'a: ${ .ClusterName }'\n"
    )
    converted = convert(text)
    assert spec(converted)["helm"]["values"] == {
        "replicas": "${ ClusterValues.replicas }",
        "keep": "k",
        "plain": 3,
    }
    assert notes(converted) == [
        "not converted: repo/web/fleet.yaml:8: helm.templateValues.structure: it renders YAML "
        "structure around the template, which bundler's templates never do; rewrite it as a "
        "value of helm.values"
    ]


def test_values_from_and_what_differs() -> None:
    text = CHART.replace(
        "}",
        ", values: {a: 1}, valuesFrom: [{configMapKeyRef: {name: cm, key: v.yaml}}, "
        "{secretKeyRef: {name: s, namespace: other}}]}",
    )
    converted = convert(text)
    assert spec(converted)["helm"]["valuesFrom"] == [
        {"kind": "ConfigMap", "name": "cm", "valuesKey": "v.yaml"},
        {"kind": "Secret", "name": "s"},
    ]
    lines = notes(converted)
    assert "Fleet read ConfigMap cm in the release namespace on each cluster" in lines[0]
    assert "Fleet read Secret s in other on each cluster" in lines[1]
    assert "precedence differs: Fleet merges valuesFrom over values" in lines[2]


def test_label_substitution_and_templates() -> None:
    text = (
        "helm:\n  repo: https://c.example\n  chart: web\n  values:\n"
        "    env: global.fleet.clusterLabels.env\n"
        "    '${ .ClusterLabels.region }-key': v\n"
        "    complex: '${ range .ClusterValues.l }x${ end }'\n"
    )
    converted = convert(text)
    assert spec(converted)["helm"]["values"] == {
        "env": "${ ClusterLabels.env | default('') }",
        "${ ClusterLabels.region }-key": "v",
        "complex": "${ range .ClusterValues.l }x${ end }",
    }
    (line,) = notes(converted)
    assert line.startswith(
        "not converted: repo/web/fleet.yaml:7: helm.values.complex: Fleet template not "
        "converted (`range` has no conversion"
    )


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            CHART + "kustomize: {dir: k}\n",
            "not converted: repo/web/fleet.yaml:2: kustomize: bundler deploys Helm charts",
        ),
        (
            CHART + "namespaceLabels: {a: b}\n",
            "not converted: repo/web/fleet.yaml:2: namespaceLabels: bundler does not label",
        ),
        (
            "helm:\n  repo: https://c.example\n  chart: web\n  flavour: x\n",
            "not converted: repo/web/fleet.yaml:4: helm.flavour: no equivalent in bundler",
        ),
        (
            CHART + "correctDrift: {enabled: true, force: true}\n",
            "not converted: repo/web/fleet.yaml:2: correctDrift.force: no equivalent",
        ),
        (
            CHART + "diff: {comparePatches: [{kind: X, operations: [{op: ignore}]}]}\n",
            "not converted: repo/web/fleet.yaml:2: diff.comparePatches[0].operations[0]: the "
            "operation 'ignore' has no equivalent",
        ),
        (
            CHART + "dependsOn:\n- selector: {matchLabels: {a: b}}\n",
            "not converted: repo/web/fleet.yaml:3: dependsOn[0].selector: bundler depends on "
            "Bundles by name",
        ),
        (
            CHART + "rolloutStrategy: {partitions: [{clusterSelector: {matchLabels: {a: b}}}]}\n",
            "note: repo/web/fleet.yaml:2: rolloutStrategy.partitions: clusters no partition picks",
        ),
    ],
    ids=[
        "kustomize",
        "namespace-labels",
        "unknown-helm-field",
        "correct-drift-force",
        "ignore-operation",
        "depends-on-selector",
        "partitions-differ",
    ],
)
def test_what_has_no_equivalent_is_listed(text: str, line: str) -> None:
    converted = convert(text)
    assert converted.document is not None
    assert any(n.startswith(line) for n in notes(converted)), notes(converted)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            "defaultNamespace: web\n",
            "not converted: repo/web/fleet.yaml:1: the bundle in web is a directory of manifests",
        ),
        (
            "kustomize: {dir: .}\n",
            "not converted: repo/web/fleet.yaml:1: the bundle in web is a kustomize directory",
        ),
        (
            "helm: {chart: 'https://example.com/web-1.0.0.tgz'}\n",
            "not converted: repo/web/fleet.yaml:1: helm.chart: the chart "
            "https://example.com/web-1.0.0.tgz is a URL",
        ),
    ],
    ids=["manifests", "kustomize-only", "go-getter-url"],
)
def test_a_bundle_that_is_no_chart_is_not_converted(text: str, line: str) -> None:
    converted = convert(text)
    assert converted.document is None
    assert any(n.startswith(line) for n in notes(converted)), notes(converted)


def test_a_chart_kept_in_the_repository_is_named_where_it_was_pushed() -> None:
    assert local_chart({"chart": "./chart"}) == "./chart"
    assert local_chart({"chart": "web", "repo": "https://c.example"}) is None
    assert local_chart({"chart": "oci://r.example/web"}) is None
    pushed = Chart("oci://127.0.0.1:5000/fleet", "local-app", "0.1.0", insecure=True)
    converted = convert("helm: {chart: ./chart}\n", charts={"helm": pushed})
    assert spec(converted)["helm"] == {
        "repo": "oci://127.0.0.1:5000/fleet",
        "chart": "local-app",
        "version": "0.1.0",
        "insecure": True,
        "install": {"disableTakeOwnership": True},
        "upgrade": {"disableTakeOwnership": True},
    }


def test_customizations_override_as_fleet_merges() -> None:
    text = (
        CHART.replace("}", ", values: {a: 1, m: {x: 1}}}")
        + "defaultNamespace: web\ndiff: {comparePatches: [{kind: A, jsonPointers: [/a]}]}\n"
        "targetCustomizations:\n"
        "- name: prod\n  clusterSelector: {matchLabels: {env: prod}}\n"
        "  namespace: web-prod\n"
        "  helm: {version: 1.3.0, values: {m: {y: 2}}, takeOwnership: true, force: true}\n"
        "  diff: {comparePatches: [{kind: B, jsonPointers: [/b]}]}\n"
        "  correctDrift: {enabled: true}\n"
        "- name: retired\n  clusterName: old\n  doNotDeploy: true\n"
    )
    gitrepo = GitRepo(name="apps", namespace="ws", targets=[{"name": "all", "clusterSelector": {}}])
    converted = spec(convert(text, gitrepo=gitrepo))
    prod, off, everything = converted["targets"]
    assert prod == {
        "name": "prod",
        "clusterSelector": {"matchLabels": {"env": "prod"}},
        "helm": {
            "version": "1.3.0",
            "values": {"m": {"y": 2}},
            "install": {"disableTakeOwnership": False},
            "upgrade": {"force": True, "disableTakeOwnership": False},
            "driftDetection": {
                "mode": "enabled",
                "ignore": [
                    {"paths": ["/a"], "target": {"kind": "A"}},
                    {"paths": ["/b"], "target": {"kind": "B"}},
                ],
            },
        },
        "namespace": "web-prod",
    }
    assert off == {
        "name": "retired",
        "clusterName": "old",
        "clusterSelector": {},
        "doNotDeploy": True,
    }
    assert everything == {"name": "all", "clusterSelector": {}}


def test_without_gitrepo_targets_the_default_group_selects() -> None:
    text = CHART + "targetCustomizations:\n- {name: prod, clusterSelector: {matchLabels: {a: b}}}\n"
    assert spec(convert(text))["targets"] == [
        {"name": "prod", "clusterGroup": "default", "clusterSelector": {"matchLabels": {"a": "b"}}},
        {"name": "default", "clusterGroup": "default"},
    ]


def test_gitrepo_settings_reach_every_bundle() -> None:
    gitrepo_doc = located(
        "apiVersion: fleet.cattle.io/v1alpha1\nkind: GitRepo\nmetadata: {name: apps}\n"
        "spec:\n  helmSecretName: creds\n  targets: [{clusterSelector: {}}]\n",
        "gitrepo.yaml",
    )
    gitrepo = GitRepo(
        name="apps",
        namespace="team-a",
        targets=[{"clusterSelector": {}}],
        target_namespace="forced",
        keep_resources=True,
        paused=True,
        correct_drift={"enabled": True},
        helm_secret_name="creds",
        service_account="deployer",
        located=gitrepo_doc,
    )
    converted = convert("namespace: mine\n" + CHART, gitrepo=gitrepo)
    assert converted.document is not None
    assert converted.document["metadata"]["namespace"] == "team-a"
    found = spec(converted)
    assert (found["namespace"], found["keepResources"], found["paused"]) == ("forced", True, True)
    assert found["helm"]["secretRef"] == {"name": "creds"}
    assert found["helm"]["serviceAccountName"] == "deployer"
    assert found["helm"]["driftDetection"] == {"mode": "enabled"}
    assert found["targets"] == [{"name": "target000", "clusterSelector": {}}]
    assert any(n.startswith("note: gitrepo.yaml:5: spec.helmSecretName") for n in notes(converted))
