"""`bundler agent`: run one cluster's agent (pull mode), or the agents of every remote-mode Cluster
from the management cluster (remote mode), until SIGTERM or SIGINT.

Pull mode talks to the management cluster through --management-kubeconfig (a credential that sees
only the cluster namespace) and writes Flux objects into --namespace on its own cluster
(--kubeconfig, else $KUBECONFIG, else the in-cluster service account). Remote mode needs only the
management cluster (--management-kubeconfig, else $KUBECONFIG, else the in-cluster service account):
Flux there deploys through each cluster's kubeconfig Secret.

Metrics, probes, log format, API rate limits and the graceful shutdown are
bundler.commands.operations'. A pull agent is ready once its BundleDeployment cache is filled.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

from bundler.agent.agent import Agent
from bundler.agent.config import DEFAULT_HEARTBEAT_INTERVAL, AgentConfig, parse_cluster_ref
from bundler.agent.metrics import AgentState
from bundler.agent.remote import RemoteAgents, RemoteSettings
from bundler.api.cluster import AgentMode
from bundler.commands.arguments import (
    add_kubeconfig_argument,
    add_workers_argument,
    check_workers,
    configure_logging,
)
from bundler.commands.flag_types import check_namespace_names, check_seconds
from bundler.commands.operations import Operations, add_operations_arguments
from bundler.core.flux import DEFAULT_AGENT_NAMESPACE
from bundler.errors import InvalidInputError
from bundler.kube.store import KubeStore, load_store
from bundler.runtime.collector import tune_collector
from bundler.runtime.host import Host

EXIT_OK = 0
PULL_WORKERS = 2
REMOTE_WORKERS = 4

log = logging.getLogger(__name__)


def register(sub: Any) -> None:
    agent = sub.add_parser(
        "agent",
        help="run a cluster's agent: BundleDeployments in, Flux HelmReleases out, status back",
        description="Watch the cluster namespace on the management cluster, write the Flux "
        "source and HelmRelease of every BundleDeployment, and report the HelmReleases back. "
        "Runs until SIGTERM or SIGINT.",
    )
    agent.add_argument(
        "--cluster",
        metavar="NS/NAME",
        help="the Cluster this agent serves (required in pull mode; in remote mode, serve only it)",
    )
    agent.add_argument(
        "--management-kubeconfig",
        metavar="PATH",
        help="kubeconfig of the management cluster (required in pull mode; remote mode, which "
        "runs on the management cluster: default $KUBECONFIG, else in-cluster)",
    )
    add_kubeconfig_argument(
        agent, "kubeconfig of this cluster (pull mode; default: $KUBECONFIG, else in-cluster)"
    )
    agent.add_argument(
        "--mode",
        choices=[m.value for m in AgentMode],
        default=AgentMode.PULL.value,
        help="pull: run in the downstream cluster (default); remote: run on the management "
        "cluster for every Cluster with agentMode remote",
    )
    agent.add_argument(
        "--namespace",
        default=DEFAULT_AGENT_NAMESPACE,
        help="pull mode: the Flux objects' namespace here; remote mode: the namespace on each "
        f"downstream cluster valuesFrom objects are read from (default {DEFAULT_AGENT_NAMESPACE})",
    )
    agent.add_argument(
        "--workspace",
        action="append",
        default=[],
        metavar="NS",
        help="remote mode: serve Clusters of this workspace only (repeatable; default: all)",
    )
    agent.add_argument(
        "--heartbeat-interval",
        type=float,
        default=DEFAULT_HEARTBEAT_INTERVAL,
        metavar="SECONDS",
        help=f"how often Cluster.status.agent.lastSeen is written (default "
        f"{DEFAULT_HEARTBEAT_INTERVAL:g})",
    )
    add_workers_argument(
        agent,
        default=None,
        help_text=f"reconcile workers (default {PULL_WORKERS} in pull mode, "
        f"{REMOTE_WORKERS} in remote)",
    )
    add_operations_arguments(agent)
    agent.set_defaults(run=run_agent)


def run_agent(args: argparse.Namespace) -> int:
    mode = AgentMode(args.mode)
    if args.workers is not None:
        check_workers(args.workers)
    check_seconds(args.heartbeat_interval, "--heartbeat-interval")
    check_namespace_names([args.namespace], "--namespace")
    check_namespace_names(args.workspace, "--workspace")
    serve = _pull_config(args) if mode is AgentMode.PULL else _remote_settings(args)
    ops = Operations.from_args(args)
    tune_collector()
    configure_logging(args.log_format)
    stores: list[KubeStore] = []
    try:
        management = load_store(args.management_kubeconfig, options=ops.kube_options())
        stores.append(management)
        if isinstance(serve, AgentConfig):
            downstream = load_store(args.kubeconfig, options=ops.kube_options())
            stores.append(downstream)
            host = _host(management, args.workers or PULL_WORKERS, "agent", ops)
            agent = Agent(host, management, downstream, serve)
            agent.start()
            ops.readiness.add("bundledeployments", lambda: _cache_problem(agent))
            ops.registry.register(AgentState(lambda: [agent]))
        else:
            host = _host(management, args.workers or REMOTE_WORKERS, "remote-agents", ops)
            options = ops.kube_options()
            remote = RemoteAgents(
                host,
                management,
                serve,
                lambda text, source: KubeStore.from_kubeconfig_text(
                    text, options=options, source=source
                ),
            )
            remote.start()
            ops.registry.register(AgentState(lambda: remote.agents().values()))
        received = ops.run_until_signal(host.start, host.stop)
        log.info("agent stopped on %s", received.name)
    finally:
        for store in stores:
            store.close()
    return EXIT_OK


def _host(store: KubeStore, workers: int, name: str, ops: Operations) -> Host:
    host = Host(store, workers=workers, name=name, metrics=ops.runtime)
    ops.watch_host(host)
    return host


def _cache_problem(agent: Agent) -> str | None:
    if agent.caches.bundle_deployments.has_synced:
        return None
    return f"the BundleDeployments of {agent.config.cluster_namespace} are not cached yet"


def _pull_config(args: argparse.Namespace) -> AgentConfig:
    if not args.cluster:
        raise InvalidInputError("pull mode needs the cluster it serves", field="--cluster")
    if not args.management_kubeconfig:
        # $KUBECONFIG and the in-cluster account are this cluster's, never the management's.
        raise InvalidInputError(
            "pull mode needs the management cluster's kubeconfig", field="--management-kubeconfig"
        )
    workspace, name = parse_cluster_ref(args.cluster)
    return AgentConfig(
        workspace=workspace,
        cluster=name,
        agent_namespace=args.namespace,
        heartbeat_interval=args.heartbeat_interval,
    )


def _remote_settings(args: argparse.Namespace) -> RemoteSettings:
    workspaces, only = tuple(args.workspace), None
    if args.cluster:
        workspace, only = parse_cluster_ref(args.cluster)
        workspaces = (workspace,)
    return RemoteSettings(
        workspaces=workspaces,
        heartbeat_interval=args.heartbeat_interval,
        only=only,
        agent_namespace=args.namespace,
    )
