"""The bootstrap controller: a new Cluster gets Flux and the pull agent by itself.

One pass per Cluster: read the workspace's BootstrapConfig `default` and the Cluster's overrides
(bundler.core.bootstrap.bootstrap_plan), observe the bootstrap HelmReleases, the agent's token and
its check-ins, decide (bundler.core.bootstrap.decide), write the Flux objects and the agent's values
Secret into the workspace, switch the Cluster to pull mode when it is time, and set the conditions
FluxInstalled, AgentConnected and Bootstrapped. With no settings (any more), nothing is deleted:
a Cluster that was bootstrapped says so (`Bootstrapped=False, BootstrapRemoved`) and keeps what
runs.

Log lines name objects only; the token goes into the values Secret and nowhere else.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterable

from pydantic import ValidationError

from bundler.api.bootstrap import DEFAULT_BOOTSTRAP_CONFIG, BootstrapConfig, ManagementEndpoint
from bundler.api.cluster import AgentMode, Cluster
from bundler.api.meta import Condition
from bundler.api.resources import (
    BOOTSTRAP_CONFIG,
    CLUSTER,
    HELM_RELEASE,
    HELM_REPOSITORY,
    SECRET,
    Resource,
)
from bundler.core.agent.helm_values import agent_helm_values
from bundler.core.agent.identity import AGENT_TOKEN_SECRET
from bundler.core.agent.kubeconfig import ApiEndpoint, token_of
from bundler.core.agent.plan import Reason as AgentReason
from bundler.core.bootstrap import (
    BOOTSTRAP_CONDITIONS,
    MANAGED_BY_BOOTSTRAP,
    BootstrapPlan,
    ConditionSpec,
    Decision,
    Observed,
    Part,
    ReleaseState,
    agent_values_secret,
    bootstrap_objects,
    bootstrap_plan,
    decide,
    object_name,
    release_state,
    removed_condition,
)
from bundler.core.capi_import import capi_owner, gate_message, is_capi_cluster, is_gated
from bundler.core.events import cluster_events
from bundler.core.json_equality import json_equal
from bundler.core.labels import (
    ANNOTATION_BOOTSTRAP_MODE,
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
    LABEL_MANAGED_BY,
)
from bundler.core.naming import cluster_namespace
from bundler.core.planning import key as ref
from bundler.core.state import condition
from bundler.manager.context import Context
from bundler.manager.controllers.bootstrap_rollout import HOLD_RETRY, BootstrapRollout
from bundler.manager.controllers.status_controllers import previous_conditions
from bundler.manager.writes import create_or_update, is_deleting, patch_status_if_changed
from bundler.runtime.controller import Result
from bundler.runtime.host import Host
from bundler.runtime.informer import Informer
from bundler.runtime.key import Key
from bundler.store.errors import NotFound
from bundler.store.protocol import Obj

log = logging.getLogger(__name__)

CONTROLLER_NAME = "bootstrap"
_KINDS: dict[str, Resource] = {"HelmRepository": HELM_REPOSITORY, "HelmRelease": HELM_RELEASE}


class BootstrapController:
    """Reconciles Clusters; `attach()` watches Clusters, BootstrapConfigs and bootstrap releases."""

    def __init__(self, ctx: Context, host: Host) -> None:
        self.ctx = ctx
        self.host = host
        self._configs: dict[str | None, Informer] = {}
        self._releases: dict[str | None, Informer] = {}
        self._rollout = BootstrapRollout()

    def attach(self) -> None:
        controller = self.host.add_controller(CONTROLLER_NAME, self.reconcile, kind=CLUSTER.kind)
        managed = {LABEL_MANAGED_BY: MANAGED_BY_BOOTSTRAP}
        for scope in self.ctx.scopes.all:
            ws = scope.workspace
            self._configs[ws] = self.host.informer(BOOTSTRAP_CONFIG, ws)
            self._releases[ws] = self.host.informer(HELM_RELEASE, ws, managed)
            controller.watch(scope.clusters)
            controller.watch(self._configs[ws], self._clusters_of_workspace)
            controller.watch(self._releases[ws], _cluster_of_release)
            # A token filled after the Cluster was seen lets its agent's values be written.
            controller.watch(scope.agent_tokens, _cluster_of_token)

    def informers(self) -> list[Informer]:
        return [*self._configs.values(), *self._releases.values()]

    def _clusters_of_workspace(self, config: Obj) -> Iterable[Key]:
        workspace = config["metadata"].get("namespace") or ""
        scope = self.ctx.scopes.of(workspace)
        return scope.keys_in(scope.clusters, workspace) if scope is not None else ()

    # -- reconcile ------------------------------------------------------------------------------

    def reconcile(self, key: Key) -> Result | None:
        scope = self.ctx.scopes.of(key.namespace)
        observed = scope.clusters.get(key.namespace, key.name) if scope else None
        cluster = scope.cluster_models.get(key.namespace, key.name) if scope else None
        if scope is None or observed is None or cluster is None or is_deleting(observed):
            return None
        config = self._config(key.namespace, scope.workspace)
        plan = bootstrap_plan(config, cluster, imported=_imported(observed, cluster))
        if plan is None:
            self._report_removed(observed)
            return None
        assert config is not None
        seen = self._observe(key, observed, cluster, config.spec.management is not None)
        decision = decide(plan, seen)
        # The switch first: the remote agent hands over before any pull agent can start.
        if decision.switch_to_pull and cluster.spec.agentMode is not AgentMode.PULL:
            self._switch_to_pull(key)
        held = self._write(key, cluster, plan, config, decision)
        self._set_conditions(observed, decision.conditions)
        return Result(requeue_after=HOLD_RETRY) if held else None

    def _config(self, workspace: str, scope_workspace: str | None) -> BootstrapConfig | None:
        raw = self._configs[scope_workspace].get(workspace, DEFAULT_BOOTSTRAP_CONFIG)
        if raw is None or is_deleting(raw):
            return None
        try:
            return BootstrapConfig.model_validate(raw)
        except ValidationError as err:
            log.warning(
                "BootstrapConfig %s/%s is invalid (%d errors): ignored",
                workspace,
                DEFAULT_BOOTSTRAP_CONFIG,
                err.error_count(),
            )
            return None

    def _observe(self, key: Key, observed: Obj, cluster: Cluster, management_set: bool) -> Observed:
        scope = self.ctx.scopes.of(key.namespace)
        assert scope is not None
        gate = is_gated(cluster)
        agent = (observed.get("status") or {}).get("agent") or {}
        pull_seen = agent.get("mode") == AgentMode.PULL.value and bool(agent.get("lastSeen"))
        namespace = cluster_namespace(key.namespace, key.name)
        token = scope.agent_tokens.get(namespace, AGENT_TOKEN_SECRET)
        return Observed(
            gate=gate_message(gate, cluster) if gate else None,
            kubeconfig_secret=cluster.spec.kubeConfigSecret,
            flux=self._release(key, Part.FLUX),
            agent=self._release(key, Part.AGENT),
            flux_present=pull_seen and not self._flux_missing(key),
            pull_agent_seen=pull_seen,
            token_ready=token is not None and token_of(token) is not None,
            management_set=management_set,
        )

    def _flux_missing(self, key: Key) -> bool:
        """Whether an agent of this cluster reported FluxNotInstalled on any deployment."""
        scope = self.ctx.scopes.of(key.namespace)
        assert scope is not None
        here = scope.deployment_models.in_namespace(cluster_namespace(key.namespace, key.name))
        return any(
            c.reason == AgentReason.FLUX_NOT_INSTALLED
            for d in here.values()
            for c in (d.status.conditions if d.status else ())
        )

    def _release(self, key: Key, part: Part) -> ReleaseState:
        scope = self.ctx.scopes.of(key.namespace)
        assert scope is not None
        return release_state(
            self._releases[scope.workspace].get(key.namespace, object_name(key.name, part))
        )

    # -- acting ---------------------------------------------------------------------------------

    def _write(
        self,
        key: Key,
        cluster: Cluster,
        plan: BootstrapPlan,
        config: BootstrapConfig,
        decision: Decision,
    ) -> bool:
        """Write the parts `decision` asks for; True when an upgrade waits for the rollout."""
        kubeconfig = cluster.spec.kubeConfigSecret or ""
        held = False
        for part, chart in ((Part.FLUX, plan.flux), (Part.AGENT, plan.agent)):
            if part not in decision.write or chart is None:
                continue
            if part is Part.AGENT and not self._write_values(key, config.spec.management):
                continue
            for kind, desired in bootstrap_objects(
                key.namespace, key.name, kubeconfig, part, chart
            ):
                if kind == HELM_RELEASE.kind and self._is_upgrade(key, desired):
                    held |= not self._upgrade(key, config, desired)
                else:
                    _ensure(self.ctx, _KINDS[kind], desired)
        return held

    def _is_upgrade(self, key: Key, desired: Obj) -> bool:
        scope = self.ctx.scopes.of(key.namespace)
        assert scope is not None
        found = self._releases[scope.workspace].get(key.namespace, desired["metadata"]["name"])
        return found is not None and not json_equal(found.get("spec"), desired["spec"])

    def _upgrade(self, key: Key, config: BootstrapConfig, desired: Obj) -> bool:
        scope = self.ctx.scopes.of(key.namespace)
        assert scope is not None
        strategy = config.spec.rolloutStrategy
        done = self._rollout.upgrade(
            self._releases[scope.workspace],
            key.namespace,
            strategy.maxUnavailable if strategy is not None else None,
            lambda: _ensure(self.ctx, HELM_RELEASE, desired),
        )
        if not done:
            log.info(
                "bootstrap: upgrade of HelmRelease %s/%s held by the rollout strategy",
                key.namespace,
                desired["metadata"]["name"],
            )
        return done

    def _write_values(self, key: Key, management: ManagementEndpoint | None) -> bool:
        """The agent's values Secret (its management kubeconfig); False when it cannot be made."""
        scope = self.ctx.scopes.of(key.namespace)
        assert scope is not None
        namespace = cluster_namespace(key.namespace, key.name)
        secret = scope.agent_tokens.get(namespace, AGENT_TOKEN_SECRET)
        token = token_of(secret) if secret is not None else None
        if management is None or token is None:
            return False  # decide() waits for both, and the condition says which is missing
        endpoint = ApiEndpoint(
            server=management.server,
            ca_pem=token.ca_pem or _decoded(management.caData),
            insecure=management.insecureSkipTLSVerify,
        )
        values = agent_helm_values(endpoint, token.token, namespace, ref(key.namespace, key.name))
        _ensure(self.ctx, SECRET, agent_values_secret(key.namespace, key.name, values))
        return True

    def _switch_to_pull(self, key: Key) -> None:
        patch = {
            "metadata": {"annotations": {ANNOTATION_BOOTSTRAP_MODE: AgentMode.PULL.value}},
            "spec": {"agentMode": AgentMode.PULL.value},
        }
        self.ctx.store.patch(CLUSTER, key.name, patch, key.namespace)
        log.info("bootstrap: Cluster %s/%s switched to pull mode", key.namespace, key.name)

    def _report_removed(self, observed: Obj) -> None:
        previous = previous_conditions(observed)
        if not any(c.type in BOOTSTRAP_CONDITIONS for c in previous):
            return
        done = next((c for c in previous if c.type == removed_condition().type), None)
        if done is not None and done.reason == removed_condition().reason:
            return
        self._set_conditions(observed, (removed_condition(),), keep_others=True)

    def _set_conditions(
        self, observed: Obj, specs: Iterable[ConditionSpec], *, keep_others: bool = False
    ) -> None:
        previous = previous_conditions(observed)
        now = self.ctx.now_iso()
        conditions: list[Condition] = [
            c for c in previous if keep_others or c.type not in BOOTSTRAP_CONDITIONS
        ]
        for spec in specs:
            conditions = condition(
                spec.type.value, spec.status, spec.reason.value, spec.message, now, conditions
            )
        wire = [c.model_dump(mode="json", exclude_none=True) for c in conditions]
        if patch_status_if_changed(self.ctx.store, CLUSTER, observed, {"conditions": wire}):
            self.ctx.events.tell(observed, cluster_events(previous, conditions))


def _imported(observed: Obj, cluster: Cluster) -> bool:
    """Imported from Cluster API: owned by a CAPI Cluster, or (offline imports, which carry no
    owner) holding one in spec.values.Cluster. Either only makes the bootstrap the default."""
    capi = cluster.spec.values.get("Cluster")
    return capi_owner(observed) is not None or (isinstance(capi, dict) and is_capi_cluster(capi))


def _cluster_of_release(release: Obj) -> Iterable[Key]:
    meta = release["metadata"]
    cluster = (meta.get("labels") or {}).get(LABEL_CLUSTER_NAME)
    return (Key(meta.get("namespace") or "", cluster),) if cluster else ()


def _cluster_of_token(secret: Obj) -> Iterable[Key]:
    labels = secret["metadata"].get("labels") or {}
    workspace, cluster = labels.get(LABEL_CLUSTER_NAMESPACE), labels.get(LABEL_CLUSTER_NAME)
    return (Key(workspace, cluster),) if workspace and cluster else ()


def _decoded(ca_data: str | None) -> bytes | None:
    return base64.b64decode(ca_data) if ca_data else None


def _ensure(ctx: Context, res: Resource, desired: Obj) -> Obj | None:
    """Create `desired`, or bring the bootstrap's object to it; an object of that name that the
    bootstrap did not write is left alone (and said so), never overwritten."""
    meta = desired["metadata"]
    try:
        observed: Obj | None = ctx.store.get(res, meta["name"], meta["namespace"])
    except NotFound:
        observed = None
    owner = ((observed or {}).get("metadata", {}).get("labels") or {}).get(LABEL_MANAGED_BY)
    if observed is not None and owner != MANAGED_BY_BOOTSTRAP:
        log.warning(
            "bootstrap: %s %s/%s exists and was not written by the bootstrap: left alone",
            res.kind,
            meta["namespace"],
            meta["name"],
        )
        return None

    def mutate(obj: Obj) -> bool:
        changed = False
        for field in ("spec", "data", "type"):
            if field in desired and not json_equal(obj.get(field), desired[field]):
                obj[field] = desired[field]
                changed = True
        labels = obj["metadata"].get("labels") or {}
        if any(labels.get(k) != v for k, v in meta["labels"].items()):
            obj["metadata"]["labels"] = {**labels, **meta["labels"]}
            changed = True
        return changed

    return create_or_update(ctx.store, res, desired, observed, mutate)
