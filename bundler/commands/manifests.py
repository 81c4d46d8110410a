"""`--manifests` of render and diff: each BundleDeployment's chart, fetched and rendered (a
Kustomize BundleDeployment's artifact fetched and built: bundler.manifests.kustomize_build).

Charts are fetched into the cache of `--cache-dir` (bundler.oci.chart_cache) with the credentials
the manager would use (the Bundle's `helm.secretRef` Secret when the inputs hold it, else the
Docker config of `--registry-config`) and the registry flags' transport, timeout and deadline,
then rendered by Helm's engine (bundler.manifests) within `--render-timeout` and
`--render-memory` (bundler.manifests.sandbox). A failure is that deployment's alone: the caller
reports it and renders the others.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import Cluster
from bundler.commands.arguments import resolver_settings
from bundler.commands.flag_types import mebibytes, positive_seconds
from bundler.core.content import credentials_secret, helm_options
from bundler.core.labels import (
    ANNOTATION_CLUSTER,
    LABEL_BUNDLE_NAMESPACE,
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
)
from bundler.core.planning import key
from bundler.errors import BundlerError, InvalidInputError
from bundler.inputs import World
from bundler.manifests.engine import HelmEngine, find_engine
from bundler.manifests.kustomize_build import KustomizeBuilder
from bundler.manifests.release import release_input, render_release, with_values_files
from bundler.manifests.sandbox import (
    DEFAULT_MEMORY_MIB,
    DEFAULT_TIMEOUT_S,
    MIN_MEMORY_MIB,
    RenderLimits,
)
from bundler.oci.chart_cache import ChartCache, default_cache_dir
from bundler.oci.credentials import Credentials, from_docker_config
from bundler.oci.reference import SCHEME as OCI_SCHEME
from bundler.oci.reference import uses_plain_http
from bundler.oci.registry import RegistryOptions
from bundler.oci.secret_credentials import credentials_from_secret
from bundler.resolution.chart_resolver import ResolverSettings, repository_host

Obj = dict[str, Any]


def add_manifest_arguments(parser: argparse._ActionsContainer, what: str) -> None:
    """`--manifests`, `--cache-dir DIR` and the bounds of one chart's render."""
    parser.add_argument(
        "--manifests",
        action="store_true",
        help=f"{what} each BundleDeployment's chart rendered by Helm's engine with the cluster's "
        "values, as helm-controller installs it (needs helm-python-sdk or a helm binary)",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help="where fetched charts are kept, by digest (default: $XDG_CACHE_HOME/bundler/charts, "
        "else ~/.cache/bundler/charts)",
    )
    parser.add_argument(
        "--render-timeout",
        type=positive_seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help="stop rendering a chart after this long: its templates are its author's "
        f"(default: {DEFAULT_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--render-memory",
        type=render_memory_mib,
        default=DEFAULT_MEMORY_MIB,
        metavar="MIB",
        help="the memory, in MiB, Helm's engine may use rendering a chart (helm-python-sdk "
        f"only; at least {MIN_MEMORY_MIB}, default: {DEFAULT_MEMORY_MIB})",
    )


render_memory_mib = mebibytes(MIN_MEMORY_MIB, "what Helm's engine needs to start")


def add_registry_config_argument(parser: argparse._ActionsContainer, used_by: str) -> None:
    """`--registry-config PATH`: the Docker config holding registry credentials."""
    parser.add_argument(
        "--registry-config",
        type=Path,
        metavar="PATH",
        help=f"Docker config with registry credentials for {used_by} "
        "(default: $DOCKER_CONFIG/config.json, else ~/.docker/config.json)",
    )


@dataclass
class ManifestRenderer:
    """Renders BundleDeployment objects of `world` (a cluster failing is a BundlerError)."""

    world: World
    cache: ChartCache
    engine: HelmEngine
    settings: ResolverSettings
    docker_config: Path | None = None
    kustomize: KustomizeBuilder | None = None

    def render(self, bd_object: Obj) -> list[Obj]:
        """The objects `bd_object`'s release holds (or its Kustomize build applies);
        BundlerError naming bundle and cluster."""
        bd = BundleDeployment.model_validate(bd_object)
        labels = bd.metadata.labels
        if bd.spec.options.kustomize is not None:
            return self._kustomized(bd)
        helm = helm_options(
            bd.spec.options,
            obj=f"BundleDeployment {labels.get(LABEL_BUNDLE_NAMESPACE)}/{bd.metadata.name}",
        )
        repo, chart, version = helm.repo or "", helm.chart or "", helm.version or ""
        cluster_ref = key(labels.get(LABEL_CLUSTER_NAMESPACE), labels.get(LABEL_CLUSTER_NAME, ""))
        try:
            options = self._options(repo, labels.get(LABEL_BUNDLE_NAMESPACE, ""), bd)
            archive = self.cache.fetch(repo, chart, version, options)
            with tempfile.TemporaryDirectory(prefix="bundler-values-files-") as scratch:
                if helm.valuesFiles:
                    derived = Path(scratch, archive.name)
                    derived.write_bytes(
                        with_values_files(
                            archive.read_bytes(),
                            helm.valuesFiles,
                            ignore_missing=bool(helm.ignoreMissingValuesFiles),
                        )
                    )
                    archive = derived
                release = release_input(bd, archive, self._cluster(cluster_ref))
                return render_release(self.engine, release)
        except BundlerError as err:
            bundle = key(labels.get(LABEL_BUNDLE_NAMESPACE), bd.metadata.name)
            raise type(err)(
                f"chart {chart} {version} from {repo} on cluster {cluster_ref}: {err}",
                obj=f"BundleDeployment {bundle}",
            ) from None

    def _kustomized(self, bd: BundleDeployment) -> list[Obj]:
        labels = bd.metadata.labels
        options = bd.spec.options.kustomize
        assert options is not None
        source = options.source.oci if options.source is not None else None
        url = (source.url if source is not None else None) or ""
        cluster_ref = key(labels.get(LABEL_CLUSTER_NAMESPACE), labels.get(LABEL_CLUSTER_NAME, ""))
        bundle = key(labels.get(LABEL_BUNDLE_NAMESPACE), bd.metadata.name)
        builder = self.kustomize or KustomizeBuilder(DEFAULT_TIMEOUT_S)
        obj = f"BundleDeployment {bundle} on cluster {cluster_ref}"
        registry = (
            self._options(url, labels.get(LABEL_BUNDLE_NAMESPACE, ""), bd)
            if url
            else RegistryOptions()
        )
        secret_name = credentials_secret(bd.spec.options)
        workspace = labels.get(LABEL_BUNDLE_NAMESPACE, "")
        secret = None if secret_name is None else self.world.secret_data(workspace, secret_name)
        return builder.build(options, registry, obj, secret)

    def _cluster(self, ref: str) -> Cluster | None:
        for cluster in self.world.clusters:
            if key(cluster.metadata.namespace, cluster.metadata.name) == ref:
                return cluster
        return None

    def _options(self, repo: str, workspace: str, bd: BundleDeployment) -> RegistryOptions:
        host = repository_host(repo)
        return RegistryOptions(
            credentials=self._credentials(host, workspace, bd),
            plain_http=repo.startswith(OCI_SCHEME)
            and uses_plain_http(host, self.settings.plain_http_hosts),
            timeout=self.settings.timeout,
            deadline=self.settings.deadline,
        )

    def _credentials(self, host: str, workspace: str, bd: BundleDeployment) -> Credentials | None:
        secret_name = credentials_secret(bd.spec.options)
        secret = None if secret_name is None else self.world.secret_data(workspace, secret_name)
        if secret is not None:
            return credentials_from_secret(secret, host)
        return from_docker_config(host, self.docker_config)


def manifest_renderer(args: argparse.Namespace, world: World) -> ManifestRenderer:
    """The renderer the flags ask for; BundlerError when no Helm engine is at hand."""
    if args.registry_config is not None and not args.registry_config.is_file():
        raise InvalidInputError(f"{args.registry_config} does not exist", field="--registry-config")
    return ManifestRenderer(
        world=world,
        cache=ChartCache(args.cache_dir or default_cache_dir()),
        engine=find_engine(RenderLimits(args.render_timeout, args.render_memory)),
        settings=resolver_settings(args),
        docker_config=args.registry_config,
        kustomize=KustomizeBuilder(args.render_timeout),
    )


def with_manifests(
    objects: Sequence[Obj], renderer: ManifestRenderer
) -> tuple[list[Obj], list[str]]:
    """`objects` with each BundleDeployment's rendered objects after its own group (the
    BundleDeployment and its Flux objects), each annotated with its cluster; and an error line
    per BundleDeployment that failed."""
    out: list[Obj] = []
    errors: list[str] = []
    pending: list[Obj] = []
    for obj in objects:
        if obj.get("kind") == "BundleDeployment":
            out.extend(pending)
            pending = _rendered(obj, renderer, errors)
        out.append(obj)
    out.extend(pending)
    return out, errors


def _rendered(bd_object: Obj, renderer: ManifestRenderer, errors: list[str]) -> list[Obj]:
    labels = bd_object["metadata"].get("labels", {})
    cluster = key(labels.get(LABEL_CLUSTER_NAMESPACE), labels.get(LABEL_CLUSTER_NAME, ""))
    try:
        rendered = renderer.render(bd_object)
    except BundlerError as err:
        errors.append(f"error: {err}")
        return []
    for obj in rendered:
        if not isinstance(obj.get("metadata"), dict):
            obj["metadata"] = {}
        if not isinstance(obj["metadata"].get("annotations"), dict):
            obj["metadata"]["annotations"] = {}
        obj["metadata"]["annotations"][ANNOTATION_CLUSTER] = cluster
    return rendered
