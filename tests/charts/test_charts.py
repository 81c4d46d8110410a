"""The Helm charts, rendered by Helm's own engine with default and non-default values.

Every rendered object is valid against the Kubernetes OpenAPI schemas (kubernetes-validate, strict:
unknown fields fail) of the oldest release the charts support and of a current one; every pod is
admitted by the restricted Pod Security profile; the RBAC is exactly bundler.core.rbac's; the
generated files (CRDs, rules) are not stale; the container arguments are the ones `bundler` parses.
"""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from bundler.cli import build_parser
from bundler.commands import manager as command
from bundler.commands.chart_files import chart_files
from bundler.core.rbac import (
    AGENT_DOWNSTREAM_RULES,
    AGENT_HEALTH_CHECK_RULES,
    MANAGER_RULES,
    REMOTE_AGENT_RULES,
    agent_downstream_namespace_rules,
    manager_rules,
    rules_body,
)
from bundler.core.shards import Shard
from tests.support.charts.pod_security import pod_spec_of, violations
from tests.support.charts.rendering import (
    AGENT_CHART,
    AGENT_REQUIRED,
    CLUSTER_REF,
    MANAGER_CHART,
    NAMESPACE,
    ROOT,
    Obj,
    containers,
    deployment,
    of_kind,
    render,
)

# The charts' kubeVersion floor and a current release.
KUBERNETES_VERSIONS = ("1.27.0", "1.37.0")
# Not a Kubernetes kind: the Prometheus Operator's (checked by test_service_monitor_*).
NOT_KUBERNETES = {("monitoring.coreos.com/v1", "ServiceMonitor")}

SCHEDULING: dict[str, Any] = {
    "nodeSelector": {"kubernetes.io/os": "linux"},
    "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["ops"]}]}
                ]
            }
        }
    },
    "priorityClassName": "system-cluster-critical",
    "topologySpreadConstraints": [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "bundler"}},
        }
    ],
    "imagePullSecrets": [{"name": "regcred"}],
    "extraEnv": [
        {"name": "HTTPS_PROXY", "value": "http://proxy.example:3128"},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    ],
    "podAnnotations": {"example.com/team": "platform"},
    "podLabels": {"example.com/tier": "ops"},
    "image": {
        "repository": "registry.example/bundler",
        "digest": "sha256:" + "ab" * 32,
        "pullPolicy": "Always",
    },
}
MONITORED: dict[str, Any] = {
    "metrics": {"enabled": True, "port": 8080, "serviceMonitor": {"enabled": True}}
}

MANAGER_MATRIX: dict[str, Obj] = {
    "defaults": {},
    "workspaces-and-lease-timings": {
        "workspaces": ["fleet-default", "team-a"],
        "leaderElection": {
            "enabled": True,
            "leaseDuration": 30,
            "renewDeadline": 20,
            "retryPeriod": 5,
        },
    },
    "one-replica-no-election-no-pdb": {
        "replicas": 1,
        "leaderElection": {
            "enabled": False,
            "leaseDuration": 15,
            "renewDeadline": 10,
            "retryPeriod": 2,
        },
        "podDisruptionBudget": {"enabled": False},
    },
    "metrics-off": {"metrics": {"enabled": False, "port": 8080}},
    "service-monitor": MONITORED,
    "scheduling-and-image": SCHEDULING,
    "operations-knobs": {
        "logFormat": "text",
        "capiImport": "off",
        "registry": {"timeout": 30, "plainHTTPHosts": ["registry.internal:5000"]},
        "kubeAPI": {"qps": 20.5, "burst": 40},
        "templates": {"memory": 128, "timeout": 5, "bundleMemory": 32},
        "workers": 8,
        "extraArgs": ["--capi-cleanup-timeout=120"],
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
    },
    "three-shards": {"shards": 3},
    "three-shards-one-replica-each": {
        "shards": 3,
        "replicas": 1,
        "podDisruptionBudget": {"enabled": False},
    },
    "existing-service-account": {
        "serviceAccount": {"create": False, "name": "ops-bundler"},
        "rbac": {"create": False},
    },
}

AGENT_MATRIX: dict[str, Obj] = {
    "required-only": AGENT_REQUIRED,
    "existing-secret": {"cluster": CLUSTER_REF, "management": {"existingSecret": "agent-kc"}},
    "insecure-no-ca": {
        "cluster": CLUSTER_REF,
        "management": {
            "server": "https://10.0.0.1:6443",
            "token": "t",
            "insecureSkipTLSVerify": True,
        },
    },
    "metrics-off": {**AGENT_REQUIRED, "metrics": {"enabled": False, "port": 8080}},
    "service-monitor": {**AGENT_REQUIRED, **MONITORED},
    "scheduling-and-image": {**AGENT_REQUIRED, **SCHEDULING},
}

RENDERINGS = [
    *[pytest.param(MANAGER_CHART, v, id=f"bundler-{k}") for k, v in MANAGER_MATRIX.items()],
    *[pytest.param(AGENT_CHART, v, id=f"bundler-agent-{k}") for k, v in AGENT_MATRIX.items()],
]


def _kubernetes_errors(obj: Obj, version: str) -> str | None:
    try:
        kubernetes_validate.validate(obj, version, strict=True)
    except kubernetes_validate.ValidationError as err:
        return f"{obj['kind']} {obj['metadata']['name']}: {err.message} at {list(err.path)}"
    return None


@pytest.mark.parametrize(("chart", "values"), RENDERINGS)
@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_rendered_object_is_valid_kubernetes(chart: Any, values: Obj, version: str) -> None:
    objects = render(chart, values, crds=True)
    checked = [o for o in objects if (o["apiVersion"], o["kind"]) not in NOT_KUBERNETES]
    errors = [e for e in (_kubernetes_errors(o, version) for o in checked) if e]
    assert not errors, "\n".join(errors)
    assert all(o["metadata"].get("namespace") in (None, NAMESPACE) for o in objects)


@pytest.mark.parametrize(("chart", "values"), RENDERINGS)
def test_every_pod_is_admitted_by_the_restricted_profile(chart: Any, values: Obj) -> None:
    objects = render(chart, values)
    pods = [spec for spec in map(pod_spec_of, objects) if spec is not None]
    assert pods, "the chart renders no workload"
    for spec in pods:
        assert violations(spec) == []
        (main,) = spec["containers"]
        assert main["securityContext"]["readOnlyRootFilesystem"] is True
        assert main["securityContext"]["runAsUser"] == 65532
        tmp = next(v for v in spec["volumes"] if v["name"] == "tmp")
        assert "emptyDir" in tmp
        assert {"name": "tmp", "mountPath": "/tmp"} in main["volumeMounts"]


@pytest.mark.parametrize(("chart", "values"), RENDERINGS)
def test_pods_have_probes_ports_and_bounded_resources(chart: Any, values: Obj) -> None:
    metrics_on = (values.get("metrics") or {}).get("enabled", True)
    for main in containers(render(chart, values)).values():
        assert main["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
        assert main["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
        ports = {p["name"]: p["containerPort"] for p in main["ports"]}
        assert ports["health"] == 9440
        assert ports.get("metrics") == (8080 if metrics_on else None)
        assert main["resources"]["requests"] and main["resources"]["limits"]["memory"]


def test_manager_defaults_run_two_leader_elected_replicas_with_a_budget() -> None:
    objects = render(MANAGER_CHART)
    manager = deployment(objects, "manager")
    assert manager["spec"]["replicas"] == 2
    args = containers(objects)["manager"]["args"]
    assert args[0] == "manager"
    assert "--leader-elect" in args
    assert f"--lease-namespace={NAMESPACE}" in args
    assert "--log-format=json" in args
    assert {"--metrics-addr=:8080", "--health-addr=:9440"} <= set(args)
    (budget,) = of_kind(objects, "PodDisruptionBudget")
    assert budget["spec"]["maxUnavailable"] == 1
    assert budget["spec"]["selector"] == manager["spec"]["selector"]
    assert of_kind(objects, "ServiceMonitor") == []


def test_manager_watches_the_named_workspaces() -> None:
    values = MANAGER_MATRIX["workspaces-and-lease-timings"]
    rendered = containers(render(MANAGER_CHART, values))
    args = rendered["manager"]["args"]
    assert [a for a in args if a.startswith("--namespace=")] == [
        "--namespace=fleet-default",
        "--namespace=team-a",
    ]
    assert "--leader-election-lease-duration=30" in args
    assert "--leader-election-retry-period=5" in args
    remote = rendered["remote-agent"]["args"]
    assert [a for a in remote if a.startswith("--workspace=")] == [
        "--workspace=fleet-default",
        "--workspace=team-a",
    ]


def test_shards_run_a_deployment_and_a_budget_each_with_their_leases_in_the_role() -> None:
    objects = render(MANAGER_CHART, {"shards": 3})
    managers = [
        d
        for d in of_kind(objects, "Deployment")
        if d["spec"]["template"]["spec"]["containers"][0]["name"] == "manager"
    ]
    assert [d["metadata"]["name"] for d in managers] == [f"bundler-shard-{i}" for i in range(3)]
    for index, manager in enumerate(managers):
        args = manager["spec"]["template"]["spec"]["containers"][0]["args"]
        options = command.options_from(build_parser().parse_args(args))
        assert options.shard == Shard(index, 3)
        assert manager["spec"]["replicas"] == 2 and options.leader_elect
        selector = manager["spec"]["selector"]["matchLabels"]
        assert selector["bundler.dev/shard"] == str(index)
        assert selector.items() <= manager["spec"]["template"]["metadata"]["labels"].items()
    budgets = [b["spec"]["selector"] for b in of_kind(objects, "PodDisruptionBudget")]
    assert budgets == [m["spec"]["selector"] for m in managers]
    (role,) = [r for r in of_kind(objects, "ClusterRole") if r["metadata"]["name"] == "bundler"]
    assert role["rules"] == rules_body(manager_rules(3))


def test_remote_agent_runs_in_cluster_with_exactly_its_rules() -> None:
    objects = render(MANAGER_CHART)
    remote = deployment(objects, "remote-agent")
    assert remote["spec"]["replicas"] == 1
    assert containers(objects)["remote-agent"]["args"][:2] == ["agent", "--mode=remote"]
    account = remote["spec"]["template"]["spec"]["serviceAccountName"]
    roles = {r["metadata"]["name"]: r for r in of_kind(objects, "ClusterRole")}
    assert roles[account]["rules"] == rules_body(REMOTE_AGENT_RULES)
    bindings = {b["metadata"]["name"]: b for b in of_kind(objects, "ClusterRoleBinding")}
    assert bindings[account]["subjects"] == [
        {"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}
    ]


def test_remote_agent_can_be_left_out() -> None:
    objects = render(MANAGER_CHART, {"remoteAgent": {"enabled": False}})
    assert list(containers(objects)) == ["manager"]
    assert len(of_kind(objects, "ClusterRole")) == 1


def test_agent_runs_for_its_cluster_with_the_management_kubeconfig() -> None:
    objects = render(AGENT_CHART, AGENT_REQUIRED)
    agent = deployment(objects, "agent")
    assert agent["spec"]["replicas"] == 1
    main = containers(objects)["agent"]
    assert main["args"][:3] == [
        "agent",
        f"--cluster={CLUSTER_REF}",
        "--management-kubeconfig=/etc/bundler/agent.kubeconfig",
    ]
    assert f"--namespace={NAMESPACE}" in main["args"]
    (secret,) = of_kind(objects, "Secret")
    volume = next(v for v in agent["spec"]["template"]["spec"]["volumes"] if "secret" in v)
    assert volume["secret"]["secretName"] == secret["metadata"]["name"]


def test_agent_with_an_existing_secret_renders_none() -> None:
    objects = render(AGENT_CHART, AGENT_MATRIX["existing-secret"])
    assert of_kind(objects, "Secret") == []
    spec = deployment(objects, "agent")["spec"]["template"]["spec"]
    assert {
        "name": "management-kubeconfig",
        "secret": {
            "secretName": "agent-kc",
            "defaultMode": 0o400,
            "items": [{"key": "agent.kubeconfig", "path": "agent.kubeconfig"}],
        },
    } in spec["volumes"]


@pytest.mark.parametrize(
    ("chart", "values"),
    [
        pytest.param(MANAGER_CHART, MONITORED, id="bundler"),
        pytest.param(AGENT_CHART, {**AGENT_REQUIRED, **MONITORED}, id="bundler-agent"),
    ],
)
def test_service_monitor_scrapes_every_metrics_service(chart: Any, values: Obj) -> None:
    objects = render(chart, values)
    (monitor,) = of_kind(objects, "ServiceMonitor")
    selector = monitor["spec"]["selector"]["matchLabels"]
    services = of_kind(objects, "Service")
    assert len(services) == len(of_kind(objects, "Deployment")), "one metrics Service per workload"
    for service in services:
        assert selector.items() <= service["metadata"]["labels"].items()
        assert monitor["spec"]["endpoints"][0]["port"] == service["spec"]["ports"][0]["name"]
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [NAMESPACE]}


@pytest.mark.parametrize(
    ("values", "applied"),
    [
        pytest.param({"nodeSelector": {"a": "b"}}, {"nodeSelector": {"a": "b"}}, id="nodeSelector"),
        pytest.param(
            {"priorityClassName": "high"}, {"priorityClassName": "high"}, id="priorityClassName"
        ),
        pytest.param(
            {"imagePullSecrets": [{"name": "r"}]},
            {"imagePullSecrets": [{"name": "r"}]},
            id="imagePullSecrets",
        ),
        pytest.param(
            {"tolerations": [{"operator": "Exists"}]},
            {"tolerations": [{"operator": "Exists"}]},
            id="tolerations",
        ),
    ],
)
def test_scheduling_values_reach_the_pod(values: Obj, applied: Obj) -> None:
    for chart, base in ((MANAGER_CHART, {}), (AGENT_CHART, AGENT_REQUIRED)):
        for workload in of_kind(render(chart, {**base, **values}), "Deployment"):
            assert applied.items() <= workload["spec"]["template"]["spec"].items()


def test_manager_cluster_role_holds_exactly_the_managers_rules() -> None:
    objects = render(MANAGER_CHART)
    account = deployment(objects, "manager")["spec"]["template"]["spec"]["serviceAccountName"]
    roles = {r["metadata"]["name"]: r for r in of_kind(objects, "ClusterRole")}
    assert roles[account]["rules"] == rules_body(MANAGER_RULES)
    bindings = {b["metadata"]["name"]: b for b in of_kind(objects, "ClusterRoleBinding")}
    assert bindings[account]["subjects"] == [
        {"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}
    ]


def test_agent_role_holds_exactly_what_it_writes_downstream() -> None:
    objects = render(AGENT_CHART, AGENT_REQUIRED)
    (role,) = of_kind(objects, "Role")
    assert role["rules"] == rules_body(AGENT_DOWNSTREAM_RULES)
    namespace_role, health_role = of_kind(objects, "ClusterRole")
    assert namespace_role["rules"] == rules_body(agent_downstream_namespace_rules(NAMESPACE))
    assert health_role["rules"] == rules_body(AGENT_HEALTH_CHECK_RULES)


def test_health_check_rules_can_be_extended_or_left_out() -> None:
    extra = {"apiGroups": ["cert-manager.io"], "resources": ["certificates"], "verbs": ["get"]}
    extended = render(AGENT_CHART, {**AGENT_REQUIRED, "rbac": {"healthCheckRules": [extra]}})
    health_role = of_kind(extended, "ClusterRole")[1]
    assert health_role["rules"] == [*rules_body(AGENT_HEALTH_CHECK_RULES), extra]
    without = render(AGENT_CHART, {**AGENT_REQUIRED, "rbac": {"healthChecks": False}})
    assert len(of_kind(without, "ClusterRole")) == 1
    assert len(of_kind(without, "ClusterRoleBinding")) == 1


@pytest.mark.parametrize("path", sorted(chart_files()), ids=str)
def test_generated_chart_files_are_up_to_date(path: Any) -> None:
    on_disk = ROOT / path
    assert on_disk.is_file(), f"{path} is missing: run `make charts`"
    assert on_disk.read_text(encoding="utf-8") == chart_files()[path], (
        f"{path} is stale: run `make charts`"
    )


def test_chart_crds_are_the_crds_directory() -> None:
    crds = render(MANAGER_CHART, crds=True)
    names = {o["metadata"]["name"] for o in crds if o["kind"] == "CustomResourceDefinition"}
    assert names == {
        f"{plural}.bundler.dev"
        for plural in (
            "bundles",
            "bundledeployments",
            "clusters",
            "clustergroups",
            "bootstrapconfigs",
        )
    }


@pytest.mark.parametrize(("chart", "values"), RENDERINGS)
def test_container_arguments_are_what_bundler_parses(chart: Any, values: Obj) -> None:
    for main in containers(render(chart, values)).values():
        parsed = build_parser().parse_args(main["args"])
        assert parsed.command == main["args"][0]
