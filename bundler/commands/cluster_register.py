"""`bundler cluster register`: add a downstream cluster to a workspace on the management cluster.

Writes the Cluster (created, or updated keeping what the command does not set) and, in remote mode,
its kubeconfig Secret `<name>-kubeconfig` (key `value`, as Cluster API names it), which the remote
agent and Flux deploy through (bundler.core.cluster_registration decides what to write). In pull
mode the next step is the agent's chart: `bundler agent-kubeconfig --cluster WS/NAME --helm-values`.
Invalid input exits 2 before anything is written; an unreachable server or a missing workspace 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bundler.api.cluster import AgentMode
from bundler.api.resources import CLUSTER, SECRET, Resource
from bundler.commands.flag_types import add_workspace_argument
from bundler.core.cluster_registration import (
    MAX_KUBECONFIG_BYTES,
    Registration,
    check_registration,
    desired_cluster,
    desired_secret,
    parse_labels,
)
from bundler.errors import BundlerError, InvalidInputError
from bundler.kube.store import load_store
from bundler.store.errors import AlreadyExists, Conflict, NotFound
from bundler.store.protocol import Obj, Store

EXIT_OK = 0
# Writes of the Cluster that meet a newer version before the command gives up.
WRITE_ATTEMPTS = 5


def register(sub: Any) -> None:
    group = sub.add_parser("cluster", help="manage the downstream clusters of a workspace")
    commands = group.add_subparsers(dest="cluster_command", required=True, metavar="COMMAND")
    command = commands.add_parser(
        "register",
        help="register a downstream cluster: its Cluster, and in remote mode its kubeconfig",
        description="Create or update the Cluster NAME in a workspace of the management cluster. "
        "Remote mode also stores the cluster's kubeconfig in the Secret NAME-kubeconfig (key "
        "value), through which Flux on the management cluster deploys to it. Pull mode needs "
        "an agent in the cluster: install charts/bundler-agent with the values `bundler "
        "agent-kubeconfig --cluster WS/NAME --helm-values` prints.",
    )
    command.add_argument("name", metavar="NAME", help="the Cluster's name (a DNS label)")
    command.add_argument(
        "--kubeconfig",
        metavar="FILE",
        help="remote mode: the downstream cluster's kubeconfig, self-contained (`kubectl config "
        "view --minify --flatten`)",
    )
    add_workspace_argument(command, "the workspace")
    command.add_argument(
        "-l",
        "--label",
        dest="labels",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a label of the Cluster, for Bundle targets (repeatable)",
    )
    command.add_argument(
        "--mode",
        choices=[m.value for m in AgentMode],
        default=AgentMode.PULL.value,
        help="pull (default): an agent in the cluster pulls its deployments; remote: Flux on "
        "the management cluster deploys through the kubeconfig",
    )
    command.add_argument(
        "--management-kubeconfig",
        metavar="PATH",
        help="kubeconfig of the management cluster (default: $KUBECONFIG, else in-cluster)",
    )
    command.add_argument(
        "--context", metavar="NAME", help="context of the management kubeconfig to use"
    )
    command.set_defaults(run=run_register)


def run_register(args: argparse.Namespace) -> int:
    registration = Registration(
        workspace=args.namespace,
        name=args.name,
        mode=AgentMode(args.mode),
        labels=parse_labels(args.labels),
        kubeconfig=_read_kubeconfig(args.kubeconfig),
    )
    check_registration(registration)
    with load_store(args.management_kubeconfig, args.context) as store:
        cluster = _current(store, CLUSTER, registration.name, registration.workspace)
        # Both decided before either is written: a refusal leaves the management cluster as it was.
        body = desired_cluster(registration, cluster)
        if registration.mode is AgentMode.REMOTE:
            secret = _current(store, SECRET, registration.secret_name, registration.workspace)
            _write(store, SECRET, desired_secret(registration, secret), secret)
        written_over = _write_cluster(store, registration, body, cluster)
    action = "created" if written_over is None else "updated"
    print(f"{registration.cluster_ref} {action} ({registration.mode.value} mode)", file=sys.stderr)
    if registration.mode is AgentMode.PULL:
        ref = f"{registration.workspace}/{registration.name}"
        print(
            "next: install charts/bundler-agent in the cluster with the values of `bundler "
            f"agent-kubeconfig --cluster {ref} --server URL --helm-values`",
            file=sys.stderr,
        )
    return EXIT_OK


def _read_kubeconfig(path: str | None) -> bytes | None:
    if path is None:
        return None
    file = Path(path)
    try:
        if file.stat().st_size > MAX_KUBECONFIG_BYTES:
            raise InvalidInputError(
                f"{path} is larger than a Secret can hold", field="--kubeconfig"
            )
        return file.read_bytes()
    except OSError as err:
        raise InvalidInputError(
            f"cannot read {path}: {err.strerror}", field="--kubeconfig"
        ) from None


def _current(store: Store, res: Resource, name: str, namespace: str) -> Obj | None:
    try:
        return store.get(res, name, namespace)
    except NotFound:
        return None


def _write_cluster(
    store: Store, registration: Registration, body: Obj, live: Obj | None
) -> Obj | None:
    """Write the Cluster; the Cluster it updated (None: it created one). The manager writes it
    too (its finalizer, its status, on the kubeconfig Secret just written): on a conflict, or a
    Cluster created meanwhile, the registration is applied again to the Cluster as it is now."""
    for _ in range(WRITE_ATTEMPTS):
        try:
            _write(store, CLUSTER, body, live)
            return live
        except (Conflict, AlreadyExists):
            live = _current(store, CLUSTER, registration.name, registration.workspace)
            body = desired_cluster(registration, live)
    raise BundlerError(
        f"kept changing while it was being registered ({WRITE_ATTEMPTS} tries); try again",
        obj=registration.cluster_ref,
    )


def _write(store: Store, res: Resource, body: Obj, live: Obj | None) -> None:
    """Create `body`, or update it over `live`; a missing workspace is named."""
    if live is not None:
        store.update(res, body)
        return
    try:
        store.create(res, body)
    except NotFound:
        namespace = body["metadata"]["namespace"]
        raise NotFound(
            "does not exist on the management cluster (create the workspace first)",
            obj=f"namespace {namespace}",
        ) from None
