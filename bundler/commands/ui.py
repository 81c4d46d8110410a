"""`bundler ui`: the fleet dashboard in the browser (bundler.ui), with the user's credentials.

The kubeconfig is the user's, as kubectl's: whatever the page shows or changes, the API server
decides with the user's RBAC. The server binds 127.0.0.1 by default; any other address must be
asked for twice (`--addr` and `--allow-non-loopback`), with a warning, since whoever reaches it
acts with those credentials. Runs until SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from bundler.commands.arguments import (
    add_kubeconfig_argument,
    check_kubeconfig_source,
    configure_logging,
)
from bundler.commands.flag_types import namespace_name
from bundler.errors import BundlerError, InvalidInputError
from bundler.kube.store import KubeOptions, load_store
from bundler.runtime.signals import shutdown_signals
from bundler.ui.app import Dashboard
from bundler.ui.security import DEFAULT_ADDR, parse_addr

log = logging.getLogger(__name__)

NON_LOOPBACK_WARNING = (
    "warning: bundler ui listens on {addr}, not a loopback address: anyone who can reach it "
    "sees what your credentials see and acts with them (the CSRF token is handed to any page "
    "the server serves); prefer the default and an SSH tunnel"
)


def register(sub: Any) -> None:
    ui = sub.add_parser(
        "ui",
        help="a fleet dashboard in the browser, with your own credentials",
        description="Serve a dashboard of the fleet (Bundles x Clusters, each Bundle's targets "
        "and rollout, each Cluster's agent and bundles) on 127.0.0.1, kept live by watches. "
        "It talks to the management cluster with your kubeconfig, so your RBAC decides what it "
        "shows and which actions (pause, resume, resume a halted rollout, allow a held "
        "deletion) succeed.",
    )
    add_kubeconfig_argument(
        ui, "kubeconfig of the management cluster (default $KUBECONFIG, else in-cluster)"
    )
    ui.add_argument("--context", metavar="NAME", help="the kubeconfig context to use")
    ui.add_argument(
        "--addr",
        default=DEFAULT_ADDR,
        metavar="HOST:PORT",
        help=f"where to listen (default {DEFAULT_ADDR}; port 0: any free port)",
    )
    ui.add_argument(
        "--allow-non-loopback",
        action="store_true",
        help="allow an --addr that is not a loopback address (whoever reaches it acts with "
        "your credentials)",
    )
    ui.add_argument(
        "-n",
        "--namespace",
        dest="namespaces",
        action="append",
        default=[],
        type=namespace_name,
        metavar="WS",
        help="show only this workspace (repeatable; default all, which needs the right to list "
        "bundler's kinds in every namespace)",
    )
    ui.add_argument(
        "--read-only",
        action="store_true",
        help="offer no actions (the server refuses them too)",
    )
    ui.set_defaults(run=run_ui)


def run_ui(args: argparse.Namespace) -> int:
    configure_logging()
    address = parse_addr(args.addr)
    if not address.loopback:
        if not args.allow_non_loopback:
            raise InvalidInputError(
                f"{args.addr} is not a loopback address; pass --allow-non-loopback to listen "
                "there anyway (whoever reaches it acts with your credentials)",
                field="--addr",
            )
        print(NON_LOOPBACK_WARNING.format(addr=args.addr), file=sys.stderr)
    check_kubeconfig_source(args.kubeconfig)
    store = load_store(args.kubeconfig, args.context, KubeOptions())
    source = args.kubeconfig or os.environ.get("KUBECONFIG") or "the in-cluster service account"
    context = f"context {args.context}" if args.context else f"current context of {source}"
    dashboard = Dashboard(
        store,
        address,
        context=context,
        namespaces=args.namespaces,
        read_only=args.read_only,
    )
    with store, shutdown_signals() as waiter:
        try:
            dashboard.start()
        except OSError as error:
            raise BundlerError(f"cannot listen on {args.addr}: {error}", field="--addr") from None
        try:
            print(f"bundler ui at {dashboard.url} (Ctrl-C stops it)", flush=True)
            received = waiter.wait()
        finally:
            dashboard.stop()
    log.info("bundler ui: stopped on %s", received.name)
    return 0
