"""`bundler manager`: run the management cluster's controllers until SIGTERM or SIGINT.

Connects with `--kubeconfig`/`--context` (else $KUBECONFIG, else the pod's service account),
watches the workspaces named by `--namespace` (repeatable; default: every namespace), and with
`--leader-elect` works only while holding the Lease `bundler-manager` in `--lease-namespace`
(default: the first `--namespace`, else `default`). A kubeconfig that cannot be loaded exits 2; a
server that cannot be reached at start exits 1, as does one that does not serve bundler's CRDs (the
message names the kind and says to install them); a signal stops the manager cleanly and exits 0.

Version ranges in Bundles are resolved against the repositories (bundler.resolution.chart_resolver):
OCI registries on loopback hosts are spoken to over plain HTTP, any other over HTTPS unless named
with `--plain-http-registry HOST` (repeatable, `host` or `host:port`); every registry request gives
up after `--registry-timeout` seconds, every operation after `--registry-deadline` seconds in total.
Credentials come from each Bundle's `helm.secretRef` Secret.

With `--shard-count N --shard-index I` the manager is shard I of N: it does the work of the
workspaces whose SHA-256 makes them shard I's (bundler.core.shards) and elects its leader through
its own Lease `bundler-manager-shard-I-of-N`; run N of them (each with its standbys) to split a
fleet among processes.

Metrics, probes, log format, API rate limits, Lease timings and the graceful shutdown are
bundler.commands.operations'. A standby (not holding the Lease) is ready and exports no fleet state.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
from functools import partial
from typing import Any

from bundler.api.resources import BUNDLER_KINDS
from bundler.capi.cleanup import DEFAULT_CLEANUP_TIMEOUT
from bundler.capi.start import CapiImportOptions, start_capi_importer
from bundler.commands.arguments import (
    add_kubeconfig_argument,
    add_registry_arguments,
    add_template_arguments,
    add_workers_argument,
    check_kubeconfig_source,
    check_workers,
    configure_logging,
    image_resolver_settings,
    resolver_settings,
    template_limits,
)
from bundler.commands.flag_types import check_seconds, mebibytes
from bundler.commands.operations import (
    Operations,
    add_leader_election_arguments,
    add_operations_arguments,
    check_lease_timings,
    positive_integer,
)
from bundler.core.capi_import import ImportMode
from bundler.core.naming import is_dns1123_label
from bundler.core.planning.held import DEFAULT_BUNDLE_HELD_MIB
from bundler.core.shards import Shard
from bundler.errors import BundlerError, InvalidInputError
from bundler.kube.store import load_store
from bundler.manager.app import Manager
from bundler.manager.options import DEFAULT_OFFLINE_AFTER, ManagerOptions
from bundler.oci.images import ImageResolver
from bundler.resolution.chart_resolver import RegistryResolver
from bundler.runtime.collector import tune_collector
from bundler.runtime.host import DEFAULT_WORKERS
from bundler.store.errors import KindNotServed
from bundler.store.protocol import Store
from bundler.ui.app import Dashboard
from bundler.ui.security import Address, parse_addr

EXIT_OK = 0

log = logging.getLogger(__name__)


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "manager",
        help="run the controllers of the management cluster",
        description="Expand Bundles into per-cluster BundleDeployments, give every Cluster its "
        "namespace and agent identity, and roll status up, until SIGTERM or SIGINT.",
    )
    add_kubeconfig_argument(parser, "default: $KUBECONFIG, else in-cluster")
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context (default: current)")
    parser.add_argument(
        "-n",
        "--namespace",
        dest="namespaces",
        action="append",
        default=[],
        metavar="WS",
        help="workspace to watch (repeatable; default: all namespaces)",
    )
    add_workers_argument(
        parser, default=DEFAULT_WORKERS, help_text=f"reconcile workers (default {DEFAULT_WORKERS})"
    )
    parser.add_argument(
        "--leader-elect", action="store_true", help="work only while holding the leader Lease"
    )
    parser.add_argument(
        "--lease-namespace",
        metavar="NS",
        help="namespace of the Lease (default: the first --namespace, else default)",
    )
    parser.add_argument(
        "--offline-after",
        type=float,
        default=DEFAULT_OFFLINE_AFTER,
        metavar="SECONDS",
        help="an agent silent this long makes its cluster Offline "
        f"(default {DEFAULT_OFFLINE_AFTER:g})",
    )
    parser.add_argument(
        "--capi-import",
        type=ImportMode,
        choices=list(ImportMode),
        default=ImportMode.LABELED,
        help="import Cluster API Clusters as Clusters: labeled (default: CAPI Clusters or their "
        'namespaces labelled bundler.dev/import: "true"), all, or off',
    )
    parser.add_argument(
        "--capi-cleanup-timeout",
        type=float,
        default=DEFAULT_CLEANUP_TIMEOUT,
        metavar="SECONDS",
        help="force the cleanup of a deleted CAPI cluster's Cluster after this long, when its "
        f"workload cluster no longer answers (default {DEFAULT_CLEANUP_TIMEOUT:g})",
    )
    parser.add_argument(
        "--bootstrap",
        action="store_true",
        help="install Flux and the agent on new Clusters as each workspace's BootstrapConfig "
        "says (needs Flux on the management cluster)",
    )
    parser.add_argument(
        "--shard-count",
        type=positive_integer,
        default=1,
        metavar="N",
        help="split the workspaces among N managers by a hash of their names (default 1)",
    )
    parser.add_argument(
        "--shard-index",
        type=int,
        default=0,
        metavar="I",
        help="which of the --shard-count shards this manager is, 0 to N-1 (default 0)",
    )
    parser.add_argument(
        "--ui-addr",
        metavar="HOST:PORT",
        help="also serve the dashboard (bundler ui) read-only, with the manager's own "
        "credentials, on this loopback address (reach it with kubectl port-forward; default: "
        "off)",
    )
    add_leader_election_arguments(parser)
    add_registry_arguments(parser)
    add_template_arguments(parser)
    parser.add_argument(
        "--template-bundle-memory",
        type=mebibytes(1),
        default=DEFAULT_BUNDLE_HELD_MIB,
        metavar="MIB",
        help="what one Bundle's rendered values may hold across all its clusters; a cluster "
        "whose render would pass it keeps what it runs and gets a TemplateLimitExceeded error "
        f"(default: {DEFAULT_BUNDLE_HELD_MIB})",
    )
    add_operations_arguments(parser)
    parser.set_defaults(run=run_manager)


def options_from(args: argparse.Namespace) -> ManagerOptions:
    """The manager options the arguments ask for; InvalidInputError names the bad flag."""
    check_workers(args.workers)
    check_seconds(args.offline_after, "--offline-after")
    check_seconds(args.capi_cleanup_timeout, "--capi-cleanup-timeout", allow_zero=True)
    check_lease_timings(args)
    if not 0 <= args.shard_index < args.shard_count:
        raise InvalidInputError(
            f"{args.shard_index} is not a shard of --shard-count {args.shard_count} "
            f"(0 to {args.shard_count - 1})",
            field="--shard-index",
        )
    for name in [*args.namespaces, *([args.lease_namespace] if args.lease_namespace else [])]:
        if not is_dns1123_label(name):
            raise InvalidInputError(f"{name!r} is not a namespace name", field="--namespace")
    return ManagerOptions(
        namespaces=tuple(args.namespaces),
        workers=args.workers,
        leader_elect=args.leader_elect,
        lease_namespace=args.lease_namespace,
        offline_after=args.offline_after,
        resolver=RegistryResolver(resolver_settings(args)),
        image_resolver=ImageResolver(image_resolver_settings(args, docker_config=False)).resolve,
        lease_duration=args.leader_election_lease_duration,
        renew_deadline=args.leader_election_renew_deadline,
        retry_period=args.leader_election_retry_period,
        template_limits=template_limits(args),
        template_bundle_mib=args.template_bundle_memory,
        bootstrap=args.bootstrap,
        shard=Shard(args.shard_index, args.shard_count) if args.shard_count > 1 else None,
    )


# Matches nothing: the check asks whether a kind is served, not for its objects.
_NOTHING = {"bundler.dev/served-check": "none"}


def check_crds_served(store: Store, namespace: str | None) -> None:
    """BundlerError naming the first bundler kind the server does not serve: the CRDs are
    missing, which otherwise shows only as informers relisting forever."""
    for res in BUNDLER_KINDS:
        try:
            store.list(res, namespace=namespace, labels=_NOTHING)
        except KindNotServed:
            raise BundlerError(
                f"the server does not serve {res.kind} ({res.plural}.{res.group}): install "
                "bundler's CRDs first (`bundler crds | kubectl apply -f -`)"
            ) from None


def ui_address(args: argparse.Namespace) -> Address | None:
    """Where --ui-addr asks the read-only dashboard to listen: loopback only, since whoever
    reaches it reads what the manager reads (kubectl port-forward reaches the pod's loopback,
    under the RBAC that grants port-forward)."""
    if args.ui_addr is None:
        return None
    address = parse_addr(args.ui_addr, flag="--ui-addr")
    if not address.loopback:
        raise InvalidInputError(
            f"{args.ui_addr} is not a loopback address: the manager serves the dashboard on "
            "loopback only (reach it with kubectl port-forward)",
            field="--ui-addr",
        )
    return address


def run_manager(args: argparse.Namespace) -> int:
    options = options_from(args)
    address = ui_address(args)
    ops = Operations.from_args(args)
    check_kubeconfig_source(args.kubeconfig)
    configure_logging(args.log_format)
    tune_collector()
    with contextlib.ExitStack() as stack:
        store = stack.enter_context(load_store(args.kubeconfig, args.context, ops.kube_options()))
        check_crds_served(store, next(iter(options.workspaces), None))
        manager = Manager(store, options, registry=ops.registry, runtime_metrics=ops.runtime)
        # bundler.manager and bundler.capi are sibling layers: the command joins them on one host.
        start_capi_importer(
            manager.host,
            CapiImportOptions(
                mode=args.capi_import,
                namespaces=options.workspaces,
                cleanup_timeout=args.capi_cleanup_timeout,
                resync_period=options.resync_period,
            ),
        )
        ops.watch_host(manager.host)
        dashboard = None
        if address is not None:
            # A client of its own: the page's reads never take the controllers' request budget
            # or connections.
            ui_store = stack.enter_context(
                load_store(args.kubeconfig, args.context, ops.kube_options())
            )
            dashboard = Dashboard(
                ui_store,
                address,
                context="the manager's credentials (read-only)",
                namespaces=options.namespaces,
                read_only=True,
            )
        log.info(
            "bundler manager: watching %s%s with %d workers%s",
            ", ".join(options.workspaces) or "all namespaces",
            f" ({options.shard}: its workspaces only)" if options.shard else "",
            options.workers,
            " (leader election on)" if options.leader_elect else "",
        )
        received = ops.run_until_signal(
            partial(_start, manager, dashboard), partial(_stop, manager, dashboard)
        )
    log.info("bundler manager: stopped on %s", received.name)
    return EXIT_OK


def _start(manager: Manager, dashboard: Dashboard | None) -> None:
    if dashboard is not None:
        dashboard.start()
        log.info("bundler manager: dashboard (read-only) at %s", dashboard.url)
    manager.start()


def _stop(manager: Manager, dashboard: Dashboard | None, timeout: float) -> None:
    if dashboard is not None:
        dashboard.stop()
    manager.stop(timeout)
