"""The agent over in-memory stores with the simulated Flux: apply, status, change, delete."""

from __future__ import annotations

from bundler.agent.agent import HANDOVER_RECHECK
from bundler.api.resources import (
    BUNDLE_DEPLOYMENT,
    CLUSTER,
    GIT_REPOSITORY,
    HELM_RELEASE,
    KUSTOMIZATION,
    OCI_REPOSITORY,
    SECRET,
)
from bundler.core.agent.plan import ANNOTATION_KEEP_RESOURCES
from bundler.core.labels import ANNOTATION_DEPLOYMENT_ID
from bundler.runtime.controller import QueueItem
from bundler.runtime.key import Key
from bundler.sim.sourced_controller import FLUX_FINALIZER
from bundler.store.protocol import EventType, WatchEvent
from tests.support.agent.objects import bd_object, kustomize_bd_object
from tests.support.agent.world import AGENT_NAMESPACE, AgentWorld, WorldFactory
from tests.support.builders import WS


def test_applies_source_and_release_and_reports_ready(world: AgentWorld) -> None:
    bd = bd_object(values={"replicas": 2})
    world.put_bd(bd)
    assert world.downstream_objects() == [("HelmRelease", "app"), ("HelmRepository", "app")]
    release = world.release()
    assert release is not None
    assert release["spec"]["values"] == {"replicas": 2}
    assert release["metadata"]["finalizers"] == [FLUX_FINALIZER]
    status = world.bd()["status"]
    assert status["appliedDeploymentID"] == bd["spec"]["deploymentID"]
    assert status["ready"] is True
    assert status["release"] == {
        "name": "app",
        "namespace": "app",
        "chartVersion": "1.0.0",
        "revision": 1,
    }
    assert world.condition("app", "Ready")["reason"] == "InstallSucceeded"


def test_values_change_updates_the_release(world: AgentWorld) -> None:
    world.put_bd(bd_object(values={"replicas": 1}))
    first = world.release()
    changed = bd_object(values={"replicas": 3}, version="1.1.0")
    world.put_bd(changed)
    release = world.release()
    assert first is not None and release is not None
    assert release["metadata"]["generation"] == first["metadata"]["generation"] + 1
    assert (
        release["metadata"]["annotations"][ANNOTATION_DEPLOYMENT_ID]
        == (changed["spec"]["deploymentID"])
    )
    assert release["spec"]["values"] == {"replicas": 3}
    status = world.bd()["status"]
    assert status["appliedDeploymentID"] == changed["spec"]["deploymentID"]
    assert status["release"]["revision"] == 2
    assert status["release"]["chartVersion"] == "1.1.0"
    assert world.condition("app", "Ready")["reason"] == "UpgradeSucceeded"


def test_status_is_written_only_when_it_changes(world: AgentWorld) -> None:
    world.put_bd(bd_object())
    before = world.bd()["metadata"]["resourceVersion"]
    world.agent.deployer.reconcile(world.bd())
    world.advance(600)  # a resync and ten heartbeats
    assert world.bd()["metadata"]["resourceVersion"] == before


def test_deleting_the_bundledeployment_uninstalls(world: AgentWorld) -> None:
    bd = bd_object()
    world.put_bd(bd)
    assert world.flux is not None and ("app", "app") in world.flux.releases()
    world.delete_bd(bd)
    assert world.downstream_objects() == []
    assert world.flux.releases() == {}


def test_keep_resources_suspends_first_and_the_release_stays(world: AgentWorld) -> None:
    bd = bd_object(keep=True)
    world.put_bd(bd)
    writes: list[WatchEvent] = []
    world.downstream.watch(HELM_RELEASE, writes.append, namespace=AGENT_NAMESPACE)
    world.delete_bd(bd)
    assert world.downstream_objects() == []
    assert world.flux is not None and ("app", "app") in world.flux.releases()
    suspended = [e for e in writes if e.object["spec"].get("suspend")]
    assert suspended, "the HelmRelease was deleted without being suspended first"
    assert not suspended[0].object["metadata"].get("deletionTimestamp")


def test_dependencies_hold_new_options_until_ready(world: AgentWorld) -> None:
    app = bd_object("app", depends_on=("db",))
    world.put_bd(app)
    assert world.release("app") is None
    waiting = world.condition("app", "Ready")
    assert waiting["reason"] == "DependencyNotReady"
    assert "db" in waiting["message"]
    world.put_bd(bd_object("db"))
    release = world.release("app")
    assert release is not None
    assert release["spec"]["dependsOn"] == [{"name": "db", "namespace": AGENT_NAMESPACE}]
    assert world.bd("app")["status"]["ready"] is True


def test_flux_not_installed_is_reported_and_retried(make_world: WorldFactory) -> None:
    world = make_world(flux=False)
    world.start()
    world.put_bd(bd_object())
    ready = world.condition("app", "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "FluxNotInstalled")
    assert "helm-controller" in ready["message"] and "source-controller" in ready["message"]
    assert world.condition("app", "Deployed")["reason"] == "FluxNotInstalled"
    failures = world.host.queue.failures
    world.advance(1)
    assert failures(_item(world, "app")) > 1


def test_drift_is_corrected_and_others_fields_kept(world: AgentWorld) -> None:
    world.put_bd(bd_object(values={"a": 1}))
    live = world.release()
    assert live is not None
    live["spec"]["values"] = {"a": 2}
    live["metadata"]["annotations"]["example.com/note"] = "kept"
    world.downstream.update(HELM_RELEASE, live)
    world.settle()
    fixed = world.release()
    assert fixed is not None
    assert fixed["spec"]["values"] == {"a": 1}
    assert fixed["metadata"]["annotations"]["example.com/note"] == "kept"
    assert fixed["metadata"]["finalizers"] == [FLUX_FINALIZER]


def test_objects_of_deleted_bundledeployments_go_at_start(make_world: WorldFactory) -> None:
    first = make_world()
    first.start()
    first.put_bd(bd_object("kept"))
    first.put_bd(bd_object("gone"))
    first.stop()
    first.memory.delete(BUNDLE_DEPLOYMENT, "gone", first.config.cluster_namespace)
    restarted = make_world(memory=first.memory, downstream=first.downstream)
    restarted.start()
    assert restarted.downstream_objects() == [("HelmRelease", "kept"), ("HelmRepository", "kept")]


def _item(world: AgentWorld, name: str) -> QueueItem:
    return QueueItem(world.agent.name, Key(world.config.cluster_namespace, name))


def test_paused_bundledeployment_keeps_what_runs(world: AgentWorld) -> None:
    world.put_bd(bd_object(version="1.0.0"))
    paused = bd_object(version="2.0.0", paused=True)
    world.put_bd(paused)
    release = world.release()
    assert release is not None
    assert release["spec"]["chart"]["spec"]["version"] == "1.0.0"
    assert world.condition("app", "Deployed")["reason"] == "Paused"
    assert world.bd()["status"]["appliedDeploymentID"] != paused["spec"]["deploymentID"]


def test_options_flux_cannot_take_are_reported(world: AgentWorld) -> None:
    world.put_bd(bd_object(version="1.*"))
    deployed = world.condition("app", "Deployed")
    assert (deployed["status"], deployed["reason"]) == ("False", "InvalidOptions")
    assert "spec.options.helm.version" in deployed["message"]
    assert world.downstream_objects() == []


def test_registry_credentials_are_copied_next_to_the_source(world: AgentWorld) -> None:
    secret = {
        "metadata": {"name": "creds", "namespace": world.config.cluster_namespace},
        "data": {"username": "dXNlcg==", "password": "cGFzcw=="},
    }
    world.memory.create(SECRET, secret)
    world.put_bd(bd_object(repo="oci://registry.example/charts", secret="creds"))
    assert world.downstream_objects() == [
        ("HelmRelease", "app"),
        ("OCIRepository", "app"),
        ("Secret", "app-credentials"),
    ]
    copied = world.get(SECRET, "app-credentials")
    source = world.get(OCI_REPOSITORY, "app")
    assert copied is not None and source is not None
    assert copied["data"] == secret["data"]
    assert source["spec"]["secretRef"] == {"name": "app-credentials"}
    world.put_bd(bd_object(repo="https://charts.example.com"))
    assert world.downstream_objects() == [("HelmRelease", "app"), ("HelmRepository", "app")]


def test_missing_credentials_are_reported(world: AgentWorld) -> None:
    world.put_bd(bd_object(secret="absent"))
    deployed = world.condition("app", "Deployed")
    assert (deployed["status"], deployed["reason"]) == ("False", "CredentialsNotFound")


def test_heartbeat_at_start_and_every_interval(world: AgentWorld) -> None:
    def last_seen() -> str:
        seen: str = world.memory.get(CLUSTER, "c1", WS)["status"]["agent"]["lastSeen"]
        return seen

    assert last_seen() == "2024-01-01T00:00:00Z"
    world.advance(59)
    assert last_seen() == "2024-01-01T00:00:00Z"
    world.advance(1)
    assert last_seen() == "2024-01-01T00:01:00Z"


def test_keep_resources_is_read_fresh_before_a_release_is_deleted(world: AgentWorld) -> None:
    bd = bd_object()
    world.put_bd(bd)
    # The HelmRelease cache lags behind: the agent's own write of keep-resources is not in it yet.
    world.agent.caches.downstream[HELM_RELEASE].stop()
    world.put_bd(bd_object(keep=True))
    live = world.release()
    assert live is not None and live["metadata"]["annotations"][ANNOTATION_KEEP_RESOURCES] == "true"
    world.delete_bd(bd)
    assert world.flux is not None and ("app", "app") in world.flux.releases()


def test_restart_does_not_report_a_running_release_as_missing(make_world: WorldFactory) -> None:
    first = make_world()
    first.start()
    first.put_bd(bd_object())
    first.put_bd(bd_object(version="2.0.0", paused=True))
    before = first.bd()["status"]
    assert before["ready"] is True
    first.stop()
    restarted = make_world(memory=first.memory, downstream=first.downstream)
    # A BundleDeployment reconciled before the housekeeping key has filled the Flux caches.
    restarted.agent.caches.ensure_management()
    restarted.agent.deployer.reconcile(restarted.bd())
    assert restarted.bd()["status"] == before


def test_a_release_deleted_behind_a_stale_cache_is_created_again(world: AgentWorld) -> None:
    world.put_bd(bd_object(values={"a": 1}))
    # The HelmRelease cache still holds a release that someone has deleted since.
    world.agent.caches.downstream[HELM_RELEASE].stop()
    world.downstream.delete(HELM_RELEASE, "app", AGENT_NAMESPACE)
    world.settle()
    assert world.release() is None
    world.put_bd(bd_object(values={"a": 2}))
    release = world.release()
    assert release is not None and release["spec"]["values"] == {"a": 2}
    assert world.condition("app", "Deployed")["reason"] == "Applied"


def test_heartbeat_in_remote_mode_lets_go_of_releases_without_uninstalling(
    world: AgentWorld,
) -> None:
    world.put_bd(bd_object("app"))
    assert world.flux is not None
    installed = world.flux.releases()
    world.memory.patch(CLUSTER, "c1", {"spec": {"agentMode": "remote"}}, WS)
    # The next heartbeat lets go; the one recheck after Flux removed its finalizer reports it.
    world.advance(60 + HANDOVER_RECHECK)
    assert world.downstream_objects() == []
    assert world.flux.releases() == installed
    agent = world.memory.get(CLUSTER, "c1", WS)["status"]["agent"]
    assert (agent["mode"], agent["releasesHandedOver"]) == ("pull", True)
    # A new spec applies nothing while the Cluster is in remote mode.
    world.put_bd(bd_object("app", values={"changed": True}))
    assert world.downstream_objects() == []


def test_pull_agent_restarted_in_remote_mode_takes_nothing_back(make_world: WorldFactory) -> None:
    first = make_world()
    first.start()
    first.put_bd(bd_object("app"))
    first.stop()
    first.memory.patch(CLUSTER, "c1", {"spec": {"agentMode": "remote"}}, WS)
    first.downstream.patch(HELM_RELEASE, "app", {"spec": {"suspend": True}}, AGENT_NAMESPACE)
    first.downstream.delete(HELM_RELEASE, "app", AGENT_NAMESPACE)
    writes: list[WatchEvent] = []
    first.downstream.watch(HELM_RELEASE, writes.append, namespace=AGENT_NAMESPACE)
    restarted = make_world(memory=first.memory, downstream=first.downstream)
    restarted.start()
    assert restarted.release("app") is None
    assert [e for e in writes if e.type is EventType.ADDED] == []


def test_a_kustomize_deployment_becomes_its_source_and_kustomization(world: AgentWorld) -> None:
    world.put_bd(kustomize_bd_object())
    assert world.downstream_objects() == [("Kustomization", "app"), ("OCIRepository", "app")]
    kustomization = world.get(KUSTOMIZATION, "app")
    assert kustomization is not None
    assert kustomization["spec"]["sourceRef"] == {"kind": "OCIRepository", "name": "app"}
    assert world.condition("app", "Deployed")["status"] == "True"


def test_a_cluster_without_kustomize_controller_still_deploys_helm_charts(
    make_world: WorldFactory,
) -> None:
    world = make_world(unserved=(KUSTOMIZATION, GIT_REPOSITORY))
    world.start()
    world.put_bd(bd_object("chart"))
    world.put_bd(kustomize_bd_object("manifests"))
    assert world.release("chart") is not None
    assert world.condition("chart", "Deployed")["status"] == "True"
    deployed = world.condition("manifests", "Deployed")
    assert (deployed["status"], deployed["reason"]) == ("False", "FluxNotInstalled")
    assert "kustomizations.kustomize.toolkit.fluxcd.io" in deployed["message"]
    assert "kustomize-controller" in deployed["message"]
