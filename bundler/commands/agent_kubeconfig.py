"""`bundler agent-kubeconfig`: the kubeconfig a pull-mode agent runs with, for one Cluster.

Refuses a Cluster in remote mode, which has no pull agent identity. Computes the Cluster's
namespace from its workspace and name (never from `status.namespace`, which the agent may write),
checks it carries that Cluster's labels, waits (bounded by --wait) until the
manager's `bundler-agent-token` Secret there holds the token Kubernetes minted for the agent's
ServiceAccount, and writes a kubeconfig for that identity (bundler.core.agent.kubeconfig): to
stdout, or to --output with mode 0600. The token goes nowhere else: not to stderr, not into errors.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bundler import yamldump
from bundler.agent.config import parse_cluster_ref
from bundler.api.cluster import AgentMode
from bundler.api.resources import CLUSTER, NAMESPACE, SECRET, Resource
from bundler.commands.arguments import add_kubeconfig_argument
from bundler.core.agent.helm_values import agent_helm_values
from bundler.core.agent.identity import AGENT_NAME, AGENT_TOKEN_SECRET
from bundler.core.agent.kubeconfig import (
    AgentToken,
    agent_endpoint,
    agent_kubeconfig,
    check_server_url,
    token_of,
)
from bundler.core.labels import (
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
    LABEL_MANAGED_BY,
    MANAGED_BY_BUNDLER,
    is_cluster_namespace_of,
)
from bundler.core.naming import cluster_namespace
from bundler.errors import InvalidInputError, TransientError
from bundler.kube.endpoint import load_store_and_endpoint
from bundler.store.errors import NotFound
from bundler.store.protocol import Obj, Store

EXIT_OK = 0
DEFAULT_WAIT = 30.0
# How often the Cluster and the Secret are read again while waiting.
POLL_INTERVAL = 0.25


@dataclass(frozen=True)
class Issued:
    """The agent's token and the cluster namespace it is for."""

    namespace: str
    token: AgentToken


def register(sub: Any) -> None:
    command = sub.add_parser(
        "agent-kubeconfig",
        help="write the kubeconfig a pull-mode agent uses: its Cluster's own, least-privilege "
        "identity on the management cluster",
        description="Read the token Kubernetes issued to the agent identity the manager keeps "
        "for a Cluster (ServiceAccount bundler-agent in the cluster namespace), and write a "
        "kubeconfig with it, for `bundler agent --management-kubeconfig`. The identity can read "
        "only the cluster namespace and write only BundleDeployment status there and its own "
        "Cluster's status.",
    )
    command.add_argument(
        "--cluster", required=True, metavar="NS/NAME", help="the Cluster the agent serves"
    )
    add_kubeconfig_argument(
        command,
        "kubeconfig of the management cluster (default: $KUBECONFIG, else in-cluster)",
    )
    command.add_argument("--context", metavar="NAME", help="context of that kubeconfig to use")
    command.add_argument(
        "--server",
        metavar="URL",
        help="the management API server as the agent reaches it (default: the server of the "
        "management kubeconfig)",
    )
    command.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the kubeconfig to FILE, readable only by its owner (default: stdout)",
    )
    command.add_argument(
        "--wait",
        type=float,
        default=DEFAULT_WAIT,
        metavar="SECONDS",
        help=f"how long to wait for the manager and Kubernetes to issue the token (default "
        f"{DEFAULT_WAIT:g})",
    )
    command.add_argument(
        "--helm-values",
        action="store_true",
        help="write the values of charts/bundler-agent (cluster, management server, CA, token) "
        "instead of a kubeconfig: `helm install ... -f` them in the downstream cluster",
    )
    command.set_defaults(run=run_agent_kubeconfig)


def run_agent_kubeconfig(args: argparse.Namespace) -> int:
    workspace, name = parse_cluster_ref(args.cluster)
    # NaN would pass every comparison and wait forever.
    if not math.isfinite(args.wait) or args.wait < 0:
        raise InvalidInputError(
            f"must be a finite number of seconds, at least 0, got {args.wait:g}", field="--wait"
        )
    server = check_server_url(args.server) if args.server else None
    output = _check_output(args.output)
    store, management = load_store_and_endpoint(args.kubeconfig, args.context)
    with store:
        issued = wait_for_token(store, workspace, name, args.wait)
    endpoint = agent_endpoint(management, issued.token, server)
    cluster_ref = f"{workspace}/{name}"
    render = agent_helm_values if args.helm_values else agent_kubeconfig
    document = render(endpoint, issued.token.token, issued.namespace, cluster_ref)
    text = yamldump.dump(document)
    if output is None:
        sys.stdout.write(text)
    else:
        _write_private(output, text)
        print(f"wrote the kubeconfig of Cluster {cluster_ref}'s agent to {output}", file=sys.stderr)
    return EXIT_OK


def wait_for_token(store: Store, workspace: str, name: str, wait: float) -> Issued:
    """The cluster namespace and the agent's token, once both exist; TransientError after `wait`
    seconds, saying which is missing.

    The namespace is computed from the Cluster's workspace and name, never read from its
    `status.namespace` (the agent writes that status too), and the token is read only from a
    namespace carrying that Cluster's labels."""
    namespace = cluster_namespace(workspace, name)
    deadline = time.monotonic() + wait
    while True:
        _check_cluster(store, workspace, name)
        found = _get(store, NAMESPACE, namespace, None)
        owned = found is not None and is_cluster_namespace_of(
            found["metadata"].get("labels"), workspace, name
        )
        secret = _get(store, SECRET, AGENT_TOKEN_SECRET, namespace) if owned else None
        token = token_of(secret) if secret is not None else None
        if token is not None:
            return Issued(namespace=namespace, token=token)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _not_issued(workspace, name, namespace, found, secret, wait)
        time.sleep(min(POLL_INTERVAL, remaining))


def _check_cluster(store: Store, workspace: str, name: str) -> None:
    cluster = _get(store, CLUSTER, name, workspace)
    where = f"Cluster {workspace}/{name}"
    if cluster is None:
        raise InvalidInputError("does not exist on the management cluster", obj=where)
    if (cluster.get("spec") or {}).get("agentMode") == AgentMode.REMOTE.value:
        raise InvalidInputError(
            f"is in {AgentMode.REMOTE.value} mode: the remote agent on the management cluster "
            "deploys to it, and no pull agent identity exists to issue a kubeconfig for (set "
            f"spec.agentMode: {AgentMode.PULL.value} first)",
            obj=where,
            field="spec.agentMode",
        )


def _get(store: Store, res: Resource, name: str, namespace: str | None) -> Obj | None:
    try:
        return store.get(res, name, namespace)
    except NotFound:
        return None


def _not_issued(
    workspace: str,
    name: str,
    namespace: str,
    found: Obj | None,
    secret: Obj | None,
    wait: float,
) -> TransientError:
    after = f"after {wait:g}s"
    cluster_ref = f"{workspace}/{name}"
    if found is None:
        return TransientError(
            f"does not exist {after}: the manager has not set up Cluster {cluster_ref} yet (is "
            f"`bundler manager` running, and watching workspace {workspace}?)",
            obj=f"Namespace {namespace}",
        )
    if not is_cluster_namespace_of(found["metadata"].get("labels"), workspace, name):
        return TransientError(
            f"lacks Cluster {cluster_ref}'s labels ({LABEL_MANAGED_BY}={MANAGED_BY_BUNDLER}, "
            f"{LABEL_CLUSTER_NAMESPACE}, {LABEL_CLUSTER_NAME}) {after}: it is not the cluster "
            "namespace bundler made, so no token is read from it",
            obj=f"Namespace {namespace}",
            field="metadata.labels",
        )
    where = f"Secret {namespace}/{AGENT_TOKEN_SECRET}"
    if secret is None:
        return TransientError(
            f"does not exist {after}: the manager creates it with the agent identity (is "
            "`bundler manager` running, with a version that creates it?)",
            obj=where,
        )
    return TransientError(
        f"holds no token {after}: Kubernetes' token controller fills it for ServiceAccount "
        f"{namespace}/{AGENT_NAME} (does that ServiceAccount exist?)",
        obj=where,
        field="data.token",
    )


def _check_output(output: str | None) -> Path | None:
    if output is None:
        return None
    path = Path(output)
    if not path.parent.is_dir():
        raise InvalidInputError(f"directory {path.parent} does not exist", field="--output")
    return path


def _write_private(path: Path, text: str) -> None:
    """Write `text` to `path` with mode 0600, replacing it at once (never half written)."""
    temporary: str | None = None
    try:
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "w") as file:
            file.write(text)
        os.replace(temporary, path)
    except OSError as err:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise InvalidInputError(f"cannot write {path}: {err.strerror}", field="--output") from None
