"""`bundler render`, `bundler explain` and `bundler crds`: offline previews of what clusters run.

render exits 0 when every targeted cluster rendered, 1 when some cluster failed to render (the
others still print; each failure goes to stderr), 2 for invalid input (`FILE:DOC-INDEX: field:
message`).

render is offline: a version range stays in the BundleDeployments as written (the manager resolves
it), an image shows its policy in place of its tag (bundler.commands.render_images), and with --flux
a bundle whose version is a range gets no Flux objects (they need a concrete version) and an error
line saying so. `--resolve` resolves ranges and images against the registries as the manager does
(bundler.resolution.chart_resolver, bundler.oci.images), with the credentials of the Bundle's
`helm.secretRef` Secret when the inputs hold it, else from the Docker config (`--registry-config
PATH`, else `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`); a bundle whose range cannot
be resolved is an error line, the other bundles still print. Other Secrets among the inputs (a CAPI
cluster's kubeconfig) only feed the Cluster API import, and Secrets and ConfigMaps named by
`valuesFrom` with `source: Management` are delivered as the manager delivers them
(bundler.commands.management_values); none is printed. `--manifests` (which
resolves ranges as --resolve does) adds after each BundleDeployment the objects its chart renders to
(bundler.commands.manifests). Values are rendered in bounded template workers
(`--template-memory`, `--template-timeout`: bundler.templating_pool), as the manager renders them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bundler.agent.config import AgentConfig
from bundler.agent.desired import desired_objects
from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import AgentMode, Cluster
from bundler.api.crdgen import all_crds
from bundler.commands.arguments import (
    add_input_paths,
    add_registry_arguments,
    add_template_arguments,
    image_resolver_settings,
    load_inputs,
    resolver_settings,
    templater,
)
from bundler.commands.manifests import (
    add_manifest_arguments,
    add_registry_config_argument,
    manifest_renderer,
    with_manifests,
)
from bundler.commands.offline_pass import WorldResolvers, plan_world
from bundler.commands.output import (
    OutputFormat,
    add_output_argument,
    format_data,
    format_objects,
    to_yaml,
)
from bundler.core.content import content_version
from bundler.core.delivery.registry import delivery_for
from bundler.core.dependencies import workspace_bundles
from bundler.core.explain import Explanation, explain, target_lines, target_state, verdict
from bundler.core.labels import ANNOTATION_CLUSTER
from bundler.core.planning import PlannedDeployment, key
from bundler.core.planning.bundle_pass import resolve_inputs
from bundler.core.planning.decide import decide_cluster
from bundler.core.targeting import missing_references
from bundler.core.templating.gotemplate import bundle_label_warnings
from bundler.core.templating.templater import IN_PROCESS, Templater
from bundler.core.validation import validate_bundle
from bundler.core.versions import LATEST_STABLE, is_exact_version
from bundler.errors import InvalidInputError
from bundler.inputs import World
from bundler.oci.images import ImageResolver
from bundler.resolution.chart_resolver import RegistryResolver, with_docker_config
from bundler.resolution.resolvers import ImageResolverFn, VersionResolver

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
    add_input_paths(render)
    add_template_arguments(render)
    render.add_argument(
        "--flux", action="store_true", help="also print each cluster's Flux objects"
    )
    add_manifest_arguments(render, "also print")
    add_output_argument(render, default=OutputFormat.YAML)
    resolving = render.add_argument_group("resolving version ranges (default: left as written)")
    resolving.add_argument(
        "--resolve",
        action="store_true",
        help="resolve version ranges against the repositories, as the manager does",
    )
    add_registry_config_argument(resolving, "--resolve and --manifests")
    add_registry_arguments(resolving)
    render.set_defaults(run=run_render)

    exp = sub.add_parser(
        "explain",
        help="why a bundle does (not) deploy to a cluster, and with which values",
        description="Say which target of the bundle decides for the cluster, or for each target "
        "the first criterion that failed, and show the merged options and rendered values. "
        "Exit 0: explained; 1: the values failed to render; 2: invalid input.",
    )
    add_input_paths(exp)
    add_template_arguments(exp)
    exp.add_argument("--bundle", required=True, metavar="NS/NAME", help="the Bundle to explain")
    exp.add_argument("--cluster", required=True, metavar="NS/NAME", help="the Cluster to explain")
    add_output_argument(exp, default=None)
    exp.set_defaults(run=run_explain)

    crds = sub.add_parser("crds", help="print the bundler.dev CRDs (or write them to a directory)")
    crds.add_argument("--output-dir", metavar="DIR", help="write one file per CRD into DIR")
    crds.set_defaults(run=run_crds)


def agent_config(cluster: Cluster) -> AgentConfig:
    """The agent that serves `cluster`, as `bundler agent` runs it by default (pull: in
    `bundler-system` downstream; remote: in the cluster namespace, through its kubeconfig)."""
    workspace, name = cluster.metadata.namespace or "", cluster.metadata.name
    if cluster.spec.agentMode is AgentMode.REMOTE:
        return AgentConfig(
            workspace=workspace,
            cluster=name,
            mode=AgentMode.REMOTE,
            kubeconfig_secret=cluster.spec.kubeConfigSecret,
        )
    return AgentConfig(workspace=workspace, cluster=name)


def _flux_objects(planned: PlannedDeployment, cluster: Cluster) -> list[dict[str, Any]]:
    """The Flux objects the cluster's agent writes for `planned`, by the agent's own function
    (bundler.agent.desired): the kinds of its delivery (bundler.core.delivery; for Helm the same
    source, its credentials secretRef included, and HelmRelease), labels and annotations. The
    Secrets it writes beside them (a credentials copy, remote-mode valuesFrom copies) are named by
    those objects, never printed."""
    bd = BundleDeployment.model_validate(planned.to_object())
    delivery = delivery_for(bd.spec.options)
    desired = desired_objects(bd, agent_config(cluster), credentials=None)
    objects = [obj for res, obj in desired.objects if res in delivery.kinds]
    for obj in objects:
        obj["metadata"].setdefault("annotations", {})[ANNOTATION_CLUSTER] = planned.cluster
    return objects


def render_world(
    world: World,
    with_flux: bool,
    resolver: VersionResolver | None = None,
    image_resolver: ImageResolverFn | None = None,
    templater: Templater = IN_PROCESS,
) -> tuple[list[dict[str, Any]], list[str]]:
    """All objects to print and all error lines (per cluster, or per bundle for its version).
    Images are resolved with `image_resolver`, else shown offline
    (bundler.commands.render_images). Values are rendered by `templater` (the command's: the
    pool of bounded template workers)."""
    clusters = {key(c.metadata.namespace, c.metadata.name): c for c in world.clusters}
    objects: list[dict[str, Any]] = []
    errors: list[str] = []
    for done in plan_world(world, resolver, image_resolver, templater=templater):
        bundle = done.bundle
        bundle_key = key(bundle.metadata.namespace, bundle.metadata.name)
        errors.extend(done.lines)
        if done.plan is None:
            errors.append(f"error: {done.failure}")
            continue
        plan = done.plan
        siblings = workspace_bundles(world.bundles, bundle.metadata.namespace)
        missing = missing_references(bundle, world.groups, siblings, siblings)
        missing += bundle_label_warnings(bundle)
        errors.extend(f"warning: Bundle {bundle_key}: {line}" for line in missing)
        ranges: set[str] = set()
        for planned in plan.deployments:
            objects.append(planned.to_object())
            version = content_version(planned.options) or ""
            if with_flux and not is_exact_version(version):
                ranges.add(version)
            elif with_flux:
                objects.extend(_flux_objects(planned, clusters[planned.cluster]))
        errors.extend(f"error: {e.message}" for e in plan.errors)
        if ranges:
            errors.append(f"error: Bundle {bundle_key}: {_unresolved(ranges)}")
        if not plan.targeted:
            errors.append(f"warning: Bundle {plan.bundle}: no cluster is targeted")
    return objects, errors


def _unresolved(ranges: set[str]) -> str:
    shown = ", ".join(repr(r) for r in sorted(ranges))
    unset = f" (no version means {LATEST_STABLE!r}: the latest stable release)"
    return (
        f"version {shown}{unset if LATEST_STABLE in ranges else ''} is a range, which the "
        "manager resolves against the repository; "
        "Flux objects need a concrete version: pass --resolve to resolve it here, or use an "
        "exact version"
    )


def cli_resolver(args: argparse.Namespace) -> RegistryResolver:
    """The resolver of --resolve: the manager's, with credentials from the Docker config."""
    if args.registry_config is not None and not args.registry_config.is_file():
        raise InvalidInputError(f"{args.registry_config} does not exist", field="--registry-config")
    return RegistryResolver(with_docker_config(resolver_settings(args), args.registry_config))


def cli_image_resolver(args: argparse.Namespace) -> ImageResolverFn:
    """The image resolver of --resolve: the manager's, with credentials from the Docker config."""
    settings = image_resolver_settings(args, docker_config=True, config_path=args.registry_config)
    return ImageResolver(settings).resolve


def run_render(args: argparse.Namespace) -> int:
    world = load_inputs(args)
    resolver = cli_resolver(args) if args.resolve or args.manifests else None
    images = cli_image_resolver(args) if args.resolve or args.manifests else None
    renderer = manifest_renderer(args, world) if args.manifests else None
    objects, messages = render_world(world, args.flux, resolver, images, templater(args))
    if renderer is not None:
        objects, chart_errors = with_manifests(objects, renderer)
        messages.extend(chart_errors)
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
    world = load_inputs(args)
    bundle = _find(world.bundles, args.bundle, "Bundle", "--bundle")
    cluster = _find(world.clusters, args.cluster, "Cluster", "--cluster")
    siblings = workspace_bundles(world.bundles, bundle.metadata.namespace)
    validate_bundle(bundle)
    resolvers = WorldResolvers(world)
    inputs = resolve_inputs(bundle, [decide_cluster(bundle, cluster, world.groups)], resolvers)
    exp = explain(
        bundle,
        cluster,
        world.groups,
        inputs,
        bundle_names=siblings,
        bundle_labels=siblings,
        templater=templater(args),
    )
    for line in resolvers.lines:
        print(line, file=sys.stderr)
    if args.output is not None:
        sys.stdout.write(format_data(explanation_data(args.bundle, args.cluster, exp), args.output))
        return EXIT_RENDER_FAILED if exp.error else EXIT_OK
    for line in [*exp.missing, *bundle_label_warnings(bundle)]:
        print(f"warning: Bundle {args.bundle}: {line}", file=sys.stderr)
    out = [f"Bundle {args.bundle} on Cluster {args.cluster}: {verdict(exp)}"]
    out.append(f"cluster groups: {', '.join(exp.groups) or '(none)'}")
    out.append(f"targetMode: {bundle.spec.targetMode.value}")
    out.extend(f"  {line}" for line in target_lines(exp))
    if exp.options is not None:
        out.append("options:")
        out.append(_indent(to_yaml(exp.options.to_wire())))
    print("\n".join(out))
    return EXIT_RENDER_FAILED if exp.error else EXIT_OK


def explanation_data(bundle: str, cluster: str, exp: Explanation) -> dict[str, Any]:
    """What `explain -o yaml|json` prints: the text output's facts, keys camelCase."""
    return {
        "bundle": bundle,
        "cluster": cluster,
        "deployed": exp.decision.deploy and exp.error is None,
        "verdict": verdict(exp),
        "clusterGroups": list(exp.groups),
        "targetMode": exp.bundle.spec.targetMode.value,
        "targets": [
            {
                "name": r.label,
                "matched": r.matched,
                "result": target_state(exp, r),
                "doNotDeploy": r.target.doNotDeploy,
            }
            for r in exp.decision.results
        ],
        "options": None if exp.options is None else exp.options.to_wire(),
        "error": exp.error,
        "held": exp.held,
        "warnings": list(exp.missing),
    }


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.rstrip().splitlines())


def run_crds(args: argparse.Namespace) -> int:
    crds = all_crds()
    if args.output_dir is None:
        sys.stdout.write(format_objects(list(crds.values()), OutputFormat.YAML))
        return EXIT_OK
    out = Path(args.output_dir)
    if out.exists() and not out.is_dir():
        raise InvalidInputError(f"{out} exists and is not a directory", field="--output-dir")
    out.mkdir(parents=True, exist_ok=True)
    for name, doc in crds.items():
        (out / name).write_text(to_yaml(doc), encoding="utf-8")
    return EXIT_OK
