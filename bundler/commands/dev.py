"""`bundler dev`: a playground on one laptop, driven with kubectl.

The project's API server (bundler.apiserver: authentication, RBAC, custom resources validated,
pruned and defaulted against their CRDs, Tables for kubectl) listens on 127.0.0.1 over HTTPS with a
fresh self-signed certificate and a fresh admin token, in front of the management store of a
simulated fleet (bundler.sim.fleet: the manager, one agent and one simulated Flux helm-controller
per Cluster). Its token controller fills the agents' token Secrets the manager writes, with that
certificate as their CA, so `bundler agent-kubeconfig` gives kubeconfigs that work against it. The
`-f` inputs are loaded as `bundler sim` loads them; a Cluster written later (`kubectl apply`) gets
its simulated downstream cluster and agent at once. The command writes an admin kubeconfig (mode
0600), says which kubectl to use when the one on PATH is missing or too old
(bundler.commands.kubectl_check), and runs until SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import logging
import secrets
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bundler.api.cluster import Cluster
from bundler.api.resources import ALL_KINDS, CLUSTER, CUSTOM_RESOURCE_DEFINITION, Resource
from bundler.apiserver.certificates import self_signed_certificate
from bundler.apiserver.server import ApiServer
from bundler.capi.start import start_capi_importer
from bundler.commands.arguments import (
    add_input_paths,
    add_registry_arguments,
    add_template_arguments,
    configure_logging,
    image_resolver_settings,
    load_inputs,
    resolver_settings,
    template_limits,
)
from bundler.commands.flag_types import non_negative_seconds
from bundler.commands.kubectl_check import playground_kubectl_advice
from bundler.errors import BundlerError
from bundler.inputs import World
from bundler.oci.images import ImageResolver
from bundler.resolution.chart_resolver import RegistryResolver, with_docker_config
from bundler.runtime.clock import SystemClock
from bundler.runtime.key import Key
from bundler.runtime.signals import shutdown_signals
from bundler.sim.fleet import DEFAULT_FLUX_DELAY, Fleet, FleetOptions

log = logging.getLogger(__name__)

DEFAULT_KUBECONFIG_OUT = "bundler-dev.kubeconfig"
# The kinds the playground serves: bundler's (from the start), the built-ins, Flux's and Cluster
# API's, and CRDs themselves, so `kubectl apply -f crds/` works as on a real cluster.
PLAYGROUND_KINDS: tuple[Resource, ...] = (*ALL_KINDS, CUSTOM_RESOURCE_DEFINITION)
_MAX_PORT = 65535


def register(sub: Any) -> None:
    dev = sub.add_parser(
        "dev",
        help="a playground: API server, manager, agents and simulated Flux, driven with kubectl",
        description="Serve a simulated fleet behind the project's API server on 127.0.0.1 "
        "(HTTPS, self-signed) until Ctrl-C: the manager, one agent and one simulated Flux "
        "helm-controller per Cluster. Writes an admin kubeconfig; then `kubectl apply`, "
        "`kubectl get bundles -w`, edit Clusters and watch the rollout. Clusters applied later "
        "get a simulated downstream cluster and agent at once.",
    )
    add_input_paths(dev, required=False)
    dev.add_argument(
        "--port",
        type=_port,
        default=0,
        metavar="N",
        help="the API server's port on 127.0.0.1 (default 0: any free port)",
    )
    dev.add_argument(
        "--kubeconfig-out",
        default=DEFAULT_KUBECONFIG_OUT,
        metavar="PATH",
        help=f"where to write the admin kubeconfig, mode 0600 (default ./{DEFAULT_KUBECONFIG_OUT})",
    )
    dev.add_argument(
        "--flux-delay",
        type=non_negative_seconds,
        default=DEFAULT_FLUX_DELAY,
        metavar="SECONDS",
        help=f"mean time a simulated Helm action takes (default {DEFAULT_FLUX_DELAY})",
    )
    add_registry_arguments(dev.add_argument_group("version ranges (resolved as the manager does)"))
    add_template_arguments(dev.add_argument_group("templates"))
    dev.set_defaults(run=run_dev)


class Playground:
    """The fleet and the API server in front of its management store; start(), then stop()."""

    def __init__(self, world: World, options: FleetOptions, workdir: Path, port: int = 0) -> None:
        self.fleet = Fleet(world, options, SystemClock())
        self.server = ApiServer(
            self.fleet.store,
            PLAYGROUND_KINDS,
            token=secrets.token_urlsafe(32),
            certificate=self_signed_certificate(workdir),
            port=port,
        )
        self._known = {sim.ref for sim in self.fleet.clusters}
        self._clusters = self.fleet.host.informer(CLUSTER)

    def start(self) -> None:
        # bundler.manager and bundler.capi are sibling layers: joined here, as `bundler manager`
        # joins them, so Cluster API Clusters applied with kubectl are imported.
        start_capi_importer(self.fleet.manager.host)
        self.fleet.start()
        self.fleet.host.add_controller(
            "dev:downstream-clusters", self._wire, primary=self._clusters
        )
        try:
            self.server.start()
        except OSError as error:
            self.fleet.stop()
            raise BundlerError(f"cannot listen on 127.0.0.1: {error}", field="--port") from None

    def stop(self) -> None:
        self.server.stop()
        self.fleet.stop()

    def _wire(self, key: Key) -> None:
        """A Cluster not seen yet gets its simulated downstream side (never taken away)."""
        if str(key) in self._known:
            return
        obj = self._clusters.get(key.namespace, key.name)
        if obj is None or obj["metadata"].get("deletionTimestamp"):
            return
        self._known.add(str(key))
        try:
            cluster = Cluster.model_validate(obj)
        except ValidationError as error:
            log.warning("Cluster %s: not simulated: %s", key, str(error).splitlines()[0])
            return
        self.fleet.add_cluster(cluster)
        log.info("Cluster %s: simulated downstream cluster and agent started", key)


def run_dev(args: argparse.Namespace) -> int:
    configure_logging()
    world = load_inputs(args) if args.paths else World()
    clock = SystemClock()
    resolver = RegistryResolver(with_docker_config(resolver_settings(args)), clock)
    images = ImageResolver(image_resolver_settings(args, docker_config=True))
    options = FleetOptions(
        flux_delay=args.flux_delay,
        resolver=resolver,
        image_resolver=images.resolve,
        template_limits=template_limits(args),
    )
    with tempfile.TemporaryDirectory(prefix="bundler-dev-") as workdir:
        playground = Playground(world, options, Path(workdir), args.port)
        with shutdown_signals() as waiter:
            playground.start()
            try:
                path = playground.server.kubeconfig(Path(args.kubeconfig_out)).resolve()
                print(f"API server at {playground.server.url}; Ctrl-C stops it", file=sys.stderr)
                advice = playground_kubectl_advice()
                if advice is not None:
                    print(advice, file=sys.stderr)
                print(f"export KUBECONFIG={path}", flush=True)
                received = waiter.wait()
            finally:
                playground.stop()
    log.info("bundler dev: stopped on %s", received.name)
    return 0


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > _MAX_PORT:
        raise argparse.ArgumentTypeError(f"must be a port number from 0 to {_MAX_PORT}")
    return int(text)
