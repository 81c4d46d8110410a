"""`bundler render`, `bundler explain` and `bundler crds`: offline previews of what clusters run.

render exits 0 when every targeted cluster rendered, 1 when some cluster failed to render (the
others still print; each failure goes to stderr), 2 for invalid input (`FILE:DOC-INDEX: field:
message`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import AgentMode, Cluster
from bundler.api.crdgen import all_crds
from bundler.commands.output import OutputFormat, format_objects, to_yaml
from bundler.core.explain import explain, target_lines, verdict
from bundler.core.flux import FluxTarget, build_flux_objects
from bundler.core.labels import ANNOTATION_CLUSTER
from bundler.core.planning import PlannedDeployment, key, plan_bundle
from bundler.errors import InvalidInputError
from bundler.inputs import World, load_world

EXIT_OK = 0
EXIT_RENDER_FAILED = 1


def register(sub: Any) -> None:
    render = sub.add_parser(
        "render",
        help="print the BundleDeployments (and Flux objects) each cluster would get",
        description="Expand Bundles over Clusters offline and print the BundleDeployments, "
        "sorted by bundle then cluster. Exit 0: all rendered; 1: some cluster failed to render "
        "(others still print); 2: invalid input.",
    )
    _add_inputs(render)
    render.add_argument(
        "--flux", action="store_true", help="also print each cluster's Flux objects"
    )
    render.add_argument(
        "-o", "--output", type=OutputFormat, choices=list(OutputFormat), default=OutputFormat.YAML
    )
    render.set_defaults(run=run_render)

    exp = sub.add_parser("explain", help="why a bundle does (not) deploy to a cluster, and what")
    _add_inputs(exp)
    exp.add_argument("--bundle", required=True, metavar="NS/NAME")
    exp.add_argument("--cluster", required=True, metavar="NS/NAME")
    exp.set_defaults(run=run_explain)

    crds = sub.add_parser("crds", help="print the bundler.dev CRDs (or write them to a directory)")
    crds.add_argument("--output-dir", metavar="DIR", help="write one file per CRD into DIR")
    crds.set_defaults(run=run_crds)


def _add_inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-f",
        "--filename",
        dest="paths",
        action="append",
        required=True,
        metavar="PATH",
        help="YAML file or directory of Bundle, Cluster and ClusterGroup documents (repeatable)",
    )


def flux_target(cluster: Cluster, namespace: str) -> FluxTarget:
    """Where the agent of `cluster` would write its Flux objects."""
    cluster_ref = key(cluster.metadata.namespace, cluster.metadata.name)
    if cluster.spec.agentMode is AgentMode.REMOTE:
        return FluxTarget(
            cluster=cluster_ref,
            namespace=namespace,
            mode=AgentMode.REMOTE,
            kubeconfig_secret=cluster.spec.kubeConfigSecret,
        )
    return FluxTarget(cluster=cluster_ref)


def _flux_objects(planned: PlannedDeployment, cluster: Cluster) -> list[dict[str, Any]]:
    bd = BundleDeployment.model_validate(planned.to_object())
    objects = build_flux_objects(bd, flux_target(cluster, planned.namespace)).all()
    for obj in objects:
        obj["metadata"].setdefault("annotations", {})[ANNOTATION_CLUSTER] = planned.cluster
    return objects


def render_world(world: World, with_flux: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """All objects to print and all per-cluster error lines."""
    clusters = {key(c.metadata.namespace, c.metadata.name): c for c in world.clusters}
    objects: list[dict[str, Any]] = []
    errors: list[str] = []
    bundles = sorted(world.bundles, key=lambda b: (b.metadata.namespace, b.metadata.name))
    for bundle in bundles:
        plan = plan_bundle(bundle, world.clusters, world.groups)
        for planned in plan.deployments:
            objects.append(planned.to_object())
            if with_flux:
                objects.extend(_flux_objects(planned, clusters[planned.cluster]))
        errors.extend(f"error: {e.message}" for e in plan.errors)
        if not plan.targeted:
            errors.append(f"warning: Bundle {plan.bundle}: no cluster is targeted")
    return objects, errors


def run_render(args: argparse.Namespace) -> int:
    world = load_world(args.paths)
    objects, messages = render_world(world, args.flux)
    sys.stdout.write(format_objects(objects, args.output))
    for line in messages:
        print(line, file=sys.stderr)
    failed = any(line.startswith("error:") for line in messages)
    return EXIT_RENDER_FAILED if failed else EXIT_OK


def _find(items: list[Any], ref: str, what: str, flag: str) -> Any:
    for item in items:
        if key(item.metadata.namespace, item.metadata.name) == ref:
            return item
    raise InvalidInputError(f"no {what} {ref!r} in the inputs", field=flag)


def run_explain(args: argparse.Namespace) -> int:
    world = load_world(args.paths)
    bundle = _find(world.bundles, args.bundle, "Bundle", "--bundle")
    cluster = _find(world.clusters, args.cluster, "Cluster", "--cluster")
    exp = explain(bundle, cluster, world.groups)
    out = [f"Bundle {args.bundle} on Cluster {args.cluster}: {verdict(exp)}"]
    out.append(f"cluster groups: {', '.join(exp.groups) or '(none)'}")
    out.append(f"targetMode: {bundle.spec.targetMode.value}")
    out.extend(f"  {line}" for line in target_lines(exp))
    if exp.options is not None:
        out.append("options:")
        out.append(_indent(to_yaml(exp.options.to_wire())))
    print("\n".join(out))
    return EXIT_RENDER_FAILED if exp.error else EXIT_OK


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.rstrip().splitlines())


def run_crds(args: argparse.Namespace) -> int:
    crds = all_crds()
    if args.output_dir is None:
        sys.stdout.write(format_objects(list(crds.values()), OutputFormat.YAML))
        return EXIT_OK
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, doc in crds.items():
        (out / name).write_text(to_yaml(doc), encoding="utf-8")
    return EXIT_OK
