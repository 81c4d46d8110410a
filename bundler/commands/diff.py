"""`bundler diff --from OLD --to NEW`: what a change to the input does to every cluster.

Each side is a file, a directory or a git revision (bundler.commands.diff_sides); `--live` takes
the BundleDeployments of a management cluster as the old side instead, and the new side's
management values (`valuesFrom` with `source: Management`) are then read on that cluster, as the
manager reads them, rather than among the inputs (bundler.commands.management_values). Both sides
are planned exactly as `render` plans them, and the difference (bundler.core.diff) is printed per
bundle and cluster: BundleDeployments created and removed, chart versions, values and options by
path, and with `--manifests` the objects the charts render to (added, removed, changed with a
unified diff; hooks left out as Helm's release manifest does, the values of Secrets redacted to a
fingerprint).

A cluster that fails to render on either side (a template error, a chart that does not render) is
an error line and is not compared; the others are. Exit codes: 0 printed (an error line: 1), and
with `--exit-code` 0 no change, 1 changes, 2 an error; invalid input exits 2 either way.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import secrets
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bundler.api.resources import BUNDLE_DEPLOYMENT
from bundler.commands.arguments import (
    add_kubeconfig_argument,
    add_registry_arguments,
    add_template_arguments,
    check_kubeconfig_source,
    templater,
)
from bundler.commands.diff_sides import parse_side, side_paths
from bundler.commands.management_values import ObjectSource, on_cluster
from bundler.commands.manifests import (
    ManifestRenderer,
    add_manifest_arguments,
    add_registry_config_argument,
    manifest_renderer,
)
from bundler.commands.offline_pass import plan_world
from bundler.commands.render import cli_resolver
from bundler.core.diff.deployments import DeploymentRef, DeploymentSide, FleetDiff, diff_fleet
from bundler.core.diff.manifests import redact_secrets
from bundler.core.diff.report import markdown_report, text_report
from bundler.core.labels import (
    LABEL_BUNDLE_NAME,
    LABEL_BUNDLE_NAMESPACE,
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
)
from bundler.core.planning import key
from bundler.core.templating.templater import IN_PROCESS, Templater
from bundler.errors import BundlerError, InvalidInputError
from bundler.inputs import World, load_world
from bundler.kube.store import load_store
from bundler.resolution.resolvers import VersionResolver

EXIT_NO_CHANGE = 0
EXIT_CHANGES = 1
EXIT_ERROR = 2
EXIT_FAILED = 1

Obj = dict[str, Any]


class DiffFormat(StrEnum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


def register(sub: Any) -> None:
    diff = sub.add_parser(
        "diff",
        help="what a change to the inputs does to each cluster",
        description="Compare the BundleDeployments (and with --manifests the rendered objects) "
        "of two versions of the inputs, cluster by cluster. Exit 0: compared (1: some cluster "
        "failed to render); with --exit-code 0 no change, 1 changes, 2 an error.",
    )
    diff.add_argument(
        "--from",
        dest="old",
        metavar="OLD",
        help="the old inputs: a file, a directory or a git revision of the current repository "
        "(read at the same paths as --to); required unless --live",
    )
    diff.add_argument(
        "--to",
        dest="new",
        required=True,
        metavar="NEW",
        help="the new inputs: a file, a directory or a git revision",
    )
    diff.add_argument(
        "--live",
        action="store_true",
        help="compare NEW with the BundleDeployments on the management cluster (--kubeconfig)",
    )
    add_kubeconfig_argument(
        diff, "the management cluster of --live (default: $KUBECONFIG, else in-cluster)"
    )
    diff.add_argument(
        "-o",
        "--output",
        type=DiffFormat,
        choices=list(DiffFormat),
        default=DiffFormat.TEXT,
        help="text (coloured on a terminal), json, or markdown for a pull request comment",
    )
    diff.add_argument(
        "--exit-code",
        action="store_true",
        help="exit 0 when nothing changes, 1 when something does, 2 on an error (for CI)",
    )
    add_template_arguments(diff)
    add_manifest_arguments(diff, "compare")
    add_registry_config_argument(diff, "--manifests")
    add_registry_arguments(diff)
    diff.set_defaults(run=run_diff)


@dataclass
class _Planned:
    """One side planned: its deployments, the deployments that failed, error and warning
    lines."""

    deployments: dict[DeploymentRef, DeploymentSide] = field(default_factory=dict)
    failed: set[DeploymentRef] = field(default_factory=set)
    failed_bundles: set[str] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def run_diff(args: argparse.Namespace) -> int:
    try:
        return _run_diff(args)
    except BundlerError as err:
        if not args.exit_code:
            raise
        # For CI, any failure is 2: exit 1 means "changes" here.
        print(f"error: {err}", file=sys.stderr)
        return EXIT_ERROR


def _run_diff(args: argparse.Namespace) -> int:
    if args.live == (args.old is not None):
        raise InvalidInputError("give either --from OLD or --live", field="--from")
    new_side = parse_side(args.new, "--to")
    old_side = None if args.live else parse_side(args.old, "--from")
    if old_side is None:
        check_kubeconfig_source(args.kubeconfig)
    with side_paths(new_side, old_side or new_side) as new_paths:
        new_world = _load(new_paths)
        resolver = cli_resolver(args) if args.manifests else None
        renderer = manifest_renderer(args, new_world) if args.manifests else None
        if old_side is None:
            # The management values of the new side as the manager reads them: on the cluster.
            with load_store(args.kubeconfig) as store:
                new = plan_side(
                    new_world, resolver, renderer, "new", templater(args), on_cluster(store)
                )
        else:
            new = plan_side(new_world, resolver, renderer, "new", templater(args))
    if old_side is None:
        old = live_deployments(args.kubeconfig, renderer)
    else:
        with side_paths(old_side, new_side) as old_paths:
            old_world = _load(old_paths)
            old_renderer = None if renderer is None else _for_world(renderer, old_world)
            old = plan_side(old_world, resolver, old_renderer, "old", templater(args))
    result = compare(old, new)
    sys.stdout.write(format_diff(result, args.output))
    for line in [*old.warnings, *new.warnings, *result.errors]:
        print(line, file=sys.stderr)
    if args.exit_code:
        if result.errors:
            return EXIT_ERROR
        return EXIT_CHANGES if result.changed else EXIT_NO_CHANGE
    return EXIT_FAILED if result.errors else EXIT_NO_CHANGE


def plan_side(
    world: World,
    resolver: VersionResolver | None,
    renderer: ManifestRenderer | None,
    label: str,
    templater: Templater = IN_PROCESS,
    values: ObjectSource | None = None,
) -> _Planned:
    """Every BundleDeployment `world` plans (the pass render runs, without resolving images),
    rendered when asked; management values are read from `values` (None: the inputs)."""
    planned = _Planned()
    # Both sides show images offline alike, so the warning that they are offline says nothing.
    for done in plan_world(world, resolver, None, values, templater, say_images=False):
        for line in done.lines:
            planned.warnings.append(line.replace("warning: ", f"warning: {label}: ", 1))
        if done.plan is None:
            bundle = done.bundle
            planned.failed_bundles.add(key(bundle.metadata.namespace, bundle.metadata.name))
            planned.errors.append(f"error: {label}: {done.failure}")
            continue
        for error in done.plan.errors:
            planned.failed.add((error.bundle, error.cluster))
            planned.errors.append(f"error: {label}: {error.message}")
        for deployment in done.plan.deployments:
            _add(planned, deployment.to_object(), renderer, label)
    return planned


def live_deployments(kubeconfig: str | None, renderer: ManifestRenderer | None) -> _Planned:
    """The BundleDeployments on the management cluster, by their promoted `spec.options`."""
    check_kubeconfig_source(kubeconfig)
    planned = _Planned()
    with load_store(kubeconfig) as store:
        items = store.list(BUNDLE_DEPLOYMENT).items
    for obj in items:
        _add(planned, obj, renderer, "live")
    return planned


def _add(planned: _Planned, bd: Obj, renderer: ManifestRenderer | None, label: str) -> None:
    ref = deployment_ref(bd)
    options = bd.get("spec", {}).get("options")
    if ref is None or not isinstance(options, Mapping):
        return
    objects = None
    if renderer is not None:
        try:
            objects = redact_secrets(renderer.render(bd), _fingerprint)
        except BundlerError as err:
            planned.errors.append(f"error: {label}: {err}")
    planned.deployments[ref] = DeploymentSide(options, objects)


# A fingerprint keyed for this run only: it tells whether a Secret's value changed between the
# sides, and, unlike a plain hash, cannot be looked up to guess a weak value from a diff.
_FINGERPRINT_KEY = secrets.token_bytes(32)


def _fingerprint(value: str) -> str:
    digest = hmac.new(_FINGERPRINT_KEY, value.encode("utf-8"), hashlib.sha256).hexdigest()
    return f"hmac-sha256:{digest[:16]}"


def deployment_ref(bd: Obj) -> DeploymentRef | None:
    """(bundle, cluster) from a BundleDeployment's labels; None for one bundler did not label."""
    labels = (bd.get("metadata") or {}).get("labels") or {}
    names = [labels.get(k) for k in _REF_LABELS]
    if not all(isinstance(name, str) and name for name in names):
        return None
    bundle_ns, bundle, cluster_ns, cluster = names
    return key(bundle_ns, str(bundle)), key(cluster_ns, str(cluster))


_REF_LABELS = (
    LABEL_BUNDLE_NAMESPACE,
    LABEL_BUNDLE_NAME,
    LABEL_CLUSTER_NAMESPACE,
    LABEL_CLUSTER_NAME,
)


def compare(old: _Planned, new: _Planned) -> FleetDiff:
    """The diff of two planned sides, leaving out what failed on either side."""
    failed = old.failed | new.failed
    failed_bundles = old.failed_bundles | new.failed_bundles

    def kept(side: _Planned) -> dict[DeploymentRef, DeploymentSide]:
        return {
            ref: deployment
            for ref, deployment in side.deployments.items()
            if ref not in failed and ref[0] not in failed_bundles
        }

    return diff_fleet(kept(old), kept(new), [*old.errors, *new.errors])


def _load(paths: list[str]) -> World:
    """The inputs at `paths`; none at all (a revision without the directory) is an empty fleet."""
    return load_world(paths, require_objects=False) if paths else World()


def format_diff(result: FleetDiff, fmt: DiffFormat) -> str:
    if fmt is DiffFormat.JSON:
        return json.dumps(result.to_data(), indent=2, ensure_ascii=False) + "\n"
    if fmt is DiffFormat.MARKDOWN:
        return markdown_report(result)
    return text_report(result, colour=_colour_wanted())


def _colour_wanted() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _for_world(renderer: ManifestRenderer, world: World) -> ManifestRenderer:
    """The same cache, engine and settings, with `world`'s clusters and Secrets."""
    return ManifestRenderer(
        world, renderer.cache, renderer.engine, renderer.settings, renderer.docker_config
    )
