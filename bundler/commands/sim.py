"""`bundler sim`: the manager, one agent per cluster and a simulated Flux, in one process.

Exit 0 when the fleet came to rest with every Bundle Ready (see bundler.sim.report: a Bundle that
targets nothing and a cluster gated by Cluster API are reported, not failures), 1 when it did not
come to rest within --timeout or some deployment is not Ready (ErrApplied, an injected failure,
...), 2 for invalid input.

Version ranges are resolved against the real repositories as `bundler manager` does (the same
`--plain-http-registry` and `--registry-timeout` flags), with credentials from a Bundle's
`helm.secretRef` Secret, else from the Docker config. Secrets among the inputs are created on the
simulated management cluster, so a Bundle's credentials Secret comes with it; a Bundle naming one
the inputs do not hold reads CredentialsNotFound.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bundler.commands.arguments import (
    add_input_paths,
    add_registry_arguments,
    add_template_arguments,
    image_resolver_settings,
    load_inputs,
    resolver_settings,
    template_limits,
)
from bundler.commands.flag_types import non_negative_seconds, positive_seconds
from bundler.commands.output import OutputFormat, add_output_argument, format_data
from bundler.errors import InvalidInputError
from bundler.oci.images import ImageResolver
from bundler.resolution.chart_resolver import RegistryResolver, with_docker_config
from bundler.runtime.clock import SystemClock
from bundler.runtime.collector import tune_collector
from bundler.sim.failures import FailurePolicy, parse_label
from bundler.sim.fleet import DEFAULT_FLUX_DELAY, DEFAULT_WORKERS, FleetOptions
from bundler.sim.generated import busiest_workspace, generated_clusters
from bundler.sim.report import format_table
from bundler.sim.run import DEFAULT_TIMEOUT, RunOptions, run_fleet

EXIT_CONVERGED = 0
EXIT_NOT_READY = 1


# One process simulates the fleet: beyond this, memory, not bundler, is what gets measured.
MAX_GENERATED_CLUSTERS = 100_000


def register(sub: Any) -> None:
    sim = sub.add_parser(
        "sim",
        help="simulate a fleet: manager, agents and Flux in one process, in memory",
        description="Run the manager, one agent per cluster and a simulated Flux helm-controller "
        "per cluster in one process over in-memory stores, with the production controllers. "
        "Progress goes to stderr every second; at the end a table per bundle (or -o yaml|json) "
        "goes to stdout. Exit 0: the fleet came to rest with every Bundle Ready (a Bundle "
        "targeting nothing and a Cluster API cluster still gated are reported, not failures); "
        "1: it did not come to rest within --timeout, or some deployment is not Ready "
        "(ErrApplied, injected failures); 2: invalid input.",
    )
    add_input_paths(sim)
    sim.add_argument(
        "--clusters",
        type=_count,
        default=0,
        metavar="N",
        help="add N generated clusters with varied env/region labels, in the workspace with the "
        "most bundles (default 0)",
    )
    sim.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed for generated clusters, delays and --fail-rate (default 0)",
    )
    add_output_argument(sim, default=None)
    sim.add_argument(
        "--json",
        dest="output",
        action="store_const",
        const=OutputFormat.JSON,
        help="the same as -o json",
    )
    failures = sim.add_argument_group("injected failures (the simulated Flux fails these releases)")
    failures.add_argument(
        "--fail-version",
        action="append",
        default=[],
        metavar="VERSION",
        help="chart version whose install/upgrade fails everywhere (repeatable)",
    )
    failures.add_argument(
        "--fail-label",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="releases fail on clusters carrying this label; several must all match (repeatable)",
    )
    failures.add_argument(
        "--fail-rate",
        type=float,
        default=0.0,
        metavar="R",
        help="fraction (0..1) of the other releases that fail, drawn from --seed (default 0)",
    )
    failures.add_argument(
        "--upgrade-to",
        metavar="VERSION",
        help="once the fleet is at rest, move every Bundle to this chart version and simulate "
        "that rollout too (with --fail-version VERSION: watch rolloutStrategy.onFailure)",
    )
    sim.add_argument(
        "--approve-after",
        type=non_negative_seconds,
        metavar="SECONDS",
        help="approve a partition that waits for approval (rolloutStrategy.approval) once it "
        "has waited this long, as `bundler rollout approve` would (default: never; the Bundle "
        "keeps waiting)",
    )
    tuning = sim.add_argument_group("tuning")
    tuning.add_argument(
        "--flux-delay",
        type=non_negative_seconds,
        default=DEFAULT_FLUX_DELAY,
        metavar="SECONDS",
        help=f"mean time a simulated Helm action takes (default {DEFAULT_FLUX_DELAY})",
    )
    tuning.add_argument(
        "--timeout",
        type=positive_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"give up when not at rest after this long (default {DEFAULT_TIMEOUT:g})",
    )
    tuning.add_argument(
        "--workers",
        type=_workers,
        default=DEFAULT_WORKERS,
        metavar="N",
        help=f"worker threads shared by all agents and Flux instances (default {DEFAULT_WORKERS})",
    )
    add_registry_arguments(sim.add_argument_group("version ranges (resolved as the manager does)"))
    add_template_arguments(sim.add_argument_group("templates"))
    sim.add_argument(
        "--values",
        action="append",
        default=[],
        metavar="NS/NAME",
        help="also show the values each cluster received for this bundle (repeatable)",
    )
    sim.set_defaults(run=run_sim)


def run_sim(args: argparse.Namespace) -> int:
    world = load_inputs(args)
    tune_collector()
    world.clusters.extend(generated_clusters(args.clusters, busiest_workspace(world), args.seed))
    failures = FailurePolicy(
        versions=frozenset(args.fail_version),
        labels=dict(parse_label(text) for text in args.fail_label),
        rate=args.fail_rate,
        seed=args.seed,
    )
    clock = SystemClock()
    resolver = RegistryResolver(with_docker_config(resolver_settings(args)), clock)
    images = ImageResolver(image_resolver_settings(args, docker_config=True))
    options = FleetOptions(
        flux_delay=args.flux_delay,
        failures=failures,
        seed=args.seed,
        workers=args.workers,
        manager_workers=args.workers,
        resolver=resolver,
        image_resolver=images.resolve,
        template_limits=template_limits(args),
    )
    bundles = {f"{b.metadata.namespace}/{b.metadata.name}" for b in world.bundles}
    for ref in args.values:
        if ref not in bundles:
            raise InvalidInputError(f"no Bundle {ref!r} in the inputs", field="--values")
    run = RunOptions(
        timeout=args.timeout,
        values_of=tuple(args.values),
        upgrade_to=args.upgrade_to,
        approve_after=args.approve_after,
    )
    report = run_fleet(world, options, clock, run, progress=_to_stderr)
    if args.output is None:
        sys.stdout.write(format_table(report))
    else:
        sys.stdout.write(format_data(report.to_json(), args.output))
    return EXIT_CONVERGED if report.succeeded else EXIT_NOT_READY


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value <= MAX_GENERATED_CLUSTERS:
        raise argparse.ArgumentTypeError(f"must be from 0 to {MAX_GENERATED_CLUSTERS}, got {value}")
    return value


def _workers(text: str) -> int:
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value
