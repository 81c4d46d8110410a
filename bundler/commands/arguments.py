"""Flags that several `bundler` commands take, so each is spelled and checked the same way.

Each command still writes its own help text: what a flag means depends on the command.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

from bundler.commands.flag_types import check_seconds, mebibytes, positive_seconds
from bundler.errors import InvalidInputError, NothingToReadError
from bundler.inputs import World, load_world
from bundler.observe.logs import LogFormat
from bundler.observe.logs import configure_logging as configure_log_lines
from bundler.oci.credentials import from_docker_config
from bundler.oci.images import ImageResolverSettings
from bundler.resolution.chart_resolver import (
    DEFAULT_DEADLINE,
    DEFAULT_TIMEOUT,
    DOCKER_CONFIG_HINT,
    ResolverSettings,
)
from bundler.templating_pool import TemplateLimits, TemplatePool, shared_pool
from bundler.templating_pool.limits import DEFAULT_MEMORY_MIB as DEFAULT_TEMPLATE_MEMORY_MIB
from bundler.templating_pool.limits import DEFAULT_TIMEOUT_S as DEFAULT_TEMPLATE_TIMEOUT_S
from bundler.templating_pool.limits import MIN_MEMORY_MIB as MIN_TEMPLATE_MEMORY_MIB


def configure_logging(log_format: LogFormat = LogFormat.TEXT) -> None:
    """INFO logs on stderr for the long-running commands, unless the embedder configured logging."""
    configure_log_lines(log_format)


def add_input_paths(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """`-f/--filename PATH` (repeatable, required unless told): the YAML inputs of the offline
    commands."""
    parser.add_argument(
        "-f",
        "--filename",
        dest="paths",
        action="append",
        required=required,
        default=None if required else [],
        metavar="PATH",
        help="YAML file or directory of Bundle, Cluster and ClusterGroup documents, and Cluster "
        "API Clusters with their kubeconfig Secrets; - reads standard input (repeatable)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="refuse documents of kinds bundler does not read (default: skip each with a notice)",
    )


def load_inputs(args: argparse.Namespace) -> World:
    """The inputs of `-f` (and `--strict`), each skipped document told on stderr."""
    try:
        world = load_world(args.paths, strict=args.strict)
    except NothingToReadError as err:
        for line in err.notices:
            print(line, file=sys.stderr)
        raise
    for line in world.notices:
        print(line, file=sys.stderr)
    return world


def add_kubeconfig_argument(parser: argparse.ArgumentParser, help_text: str) -> None:
    """`--kubeconfig PATH`: the cluster to talk to (unset: $KUBECONFIG, else in-cluster)."""
    parser.add_argument("--kubeconfig", metavar="PATH", help=help_text)


IN_CLUSTER_ENV = "KUBERNETES_SERVICE_HOST"  # set by Kubernetes in every pod


def check_kubeconfig_source(kubeconfig: str | None) -> None:
    """InvalidInputError unless there is a cluster to talk to: --kubeconfig, $KUBECONFIG, or a pod's
    service account."""
    if kubeconfig or os.environ.get("KUBECONFIG") or os.environ.get(IN_CLUSTER_ENV):
        return
    raise InvalidInputError(
        f"no cluster to talk to: set $KUBECONFIG or pass --kubeconfig (not in a cluster either: "
        f"${IN_CLUSTER_ENV} is unset)",
        field="--kubeconfig",
    )


def add_workers_argument(
    parser: argparse.ArgumentParser, *, default: int | None, help_text: str
) -> None:
    """`--workers N`: how many reconcile workers; check the value with `check_workers`."""
    parser.add_argument("--workers", type=int, default=default, metavar="N", help=help_text)


def check_workers(workers: int) -> None:
    """InvalidInputError naming --workers unless there is at least one worker."""
    if workers < 1:
        raise InvalidInputError(f"must be at least 1, got {workers}", field="--workers")


def add_registry_arguments(parser: argparse._ActionsContainer) -> None:
    """The flags of the chart version resolver (manager, sim and render --resolve)."""
    parser.add_argument(
        "--plain-http-registry",
        dest="plain_http_registries",
        action="append",
        default=[],
        metavar="HOST",
        help="talk to this OCI registry (host or host:port) over plain HTTP (repeatable; "
        "loopback hosts always are)",
    )
    parser.add_argument(
        "--registry-timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"give up on a registry request after this long (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--registry-deadline",
        type=float,
        default=DEFAULT_DEADLINE,
        metavar="SECONDS",
        help="give up on a registry operation (a tag listing with all its pages, a manifest, an "
        f"index.yaml) after this long in total, however slowly it answers "
        f"(default {DEFAULT_DEADLINE:g})",
    )


def resolver_settings(args: argparse.Namespace) -> ResolverSettings:
    """The resolver settings the registry flags ask for; InvalidInputError names a bad flag."""
    check_seconds(args.registry_timeout, "--registry-timeout")
    check_seconds(args.registry_deadline, "--registry-deadline")
    return ResolverSettings(
        timeout=args.registry_timeout,
        deadline=args.registry_deadline,
        plain_http_hosts=frozenset(args.plain_http_registries),
    )


def image_resolver_settings(
    args: argparse.Namespace, *, docker_config: bool, config_path: Path | None = None
) -> ImageResolverSettings:
    """The image resolver's settings from the same registry flags. `docker_config`: a command run
    by a person, whose images without a secretRef use the Docker config's credentials (at
    `config_path`, else $DOCKER_CONFIG, else ~/.docker); the manager has only Secrets."""
    charts = resolver_settings(args)
    settings = ImageResolverSettings(
        timeout=charts.timeout,
        deadline=charts.deadline,
        plain_http_hosts=charts.plain_http_hosts,
    )
    if not docker_config:
        return settings
    hint = (
        DOCKER_CONFIG_HINT
        if config_path is None
        else f"add the registry's credentials to {config_path}"
    )
    return dataclasses.replace(
        settings,
        fallback_credentials=lambda host: from_docker_config(host, config_path),
        credentials_hint=hint,
    )


def add_template_arguments(parser: argparse._ActionsContainer) -> None:
    """`--template-memory MIB` and `--template-timeout SECONDS`: the bounds of one cluster's
    values render in a template worker (bundler.templating_pool.limits)."""
    parser.add_argument(
        "--template-memory",
        type=template_memory_mib,
        default=DEFAULT_TEMPLATE_MEMORY_MIB,
        metavar="MIB",
        help="the memory, in MiB, one cluster's values render may allocate in a template worker "
        f"(at least {MIN_TEMPLATE_MEMORY_MIB}, default: {DEFAULT_TEMPLATE_MEMORY_MIB})",
    )
    parser.add_argument(
        "--template-timeout",
        type=positive_seconds,
        default=DEFAULT_TEMPLATE_TIMEOUT_S,
        metavar="SECONDS",
        help="stop one cluster's values render after this long, wall or CPU time "
        f"(default: {DEFAULT_TEMPLATE_TIMEOUT_S:g})",
    )


template_memory_mib = mebibytes(MIN_TEMPLATE_MEMORY_MIB)


def template_limits(args: argparse.Namespace) -> TemplateLimits:
    """The template limits of `add_template_arguments`."""
    return TemplateLimits(memory_mib=args.template_memory, timeout_s=args.template_timeout)


def templater(args: argparse.Namespace) -> TemplatePool:
    """The process's pool of template workers for the limits the flags ask for."""
    return shared_pool(template_limits(args))
