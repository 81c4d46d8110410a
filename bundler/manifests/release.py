"""From a BundleDeployment to the objects its release would hold on its cluster.

The release is rendered the way helm-controller installs the HelmRelease the agent writes
(bundler.core.flux): release name `helm.releaseName` or the bundle's name (within Helm's 53
characters), the deployment's namespace as the release namespace, the rendered `helm.values` (no
`--set`; `valuesFrom` is read on the cluster and cannot be known here), CRDs unless the release
skips them. The Kube version is the cluster's when its Cluster says it: the Cluster API
`spec.topology.version` an imported cluster carries in `spec.values.Cluster`; else Helm's default.
With `helm.valuesFiles` the chart is first made what source-controller makes of it for the
HelmChart: its values.yaml replaced by those files of the chart merged in order
(`with_values_files`).

The objects are those of Helm's release manifest (`helm get manifest`), what Flux applies and
watches: hooks (`helm.sh/hook`) are left out, as Helm keeps them apart and runs them around an
install, and so are their names, which charts often make random. Test hooks are kept only when the
HelmRelease runs them (`test.enable`), each annotated `bundler.dev/helm-hook: test`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import Cluster
from bundler.api.helm import CRDsPolicy
from bundler.core.content import helm_options
from bundler.core.flux import bundle_name, helm_release_name
from bundler.core.merge import deep_merge
from bundler.errors import InvalidInputError, TemplateError
from bundler.manifests.engine import MAX_RENDERED_BYTES, HelmEngine, ReleaseInput
from bundler.oci import package

Obj = dict[str, Any]

HELM_HOOK = "helm.sh/hook"
# Helm's test hook events (test-success is the older spelling).
TEST_HOOKS = frozenset({"test", "test-success"})
ANNOTATION_HELM_HOOK = "bundler.dev/helm-hook"


def cluster_kube_version(cluster: Cluster | None) -> str | None:
    """The Kubernetes version a Cluster declares (its Cluster API topology version), if any."""
    capi = cluster.spec.values.get("Cluster") if cluster is not None else None
    topology = _get(capi, "spec", "topology")
    version = topology.get("version") if isinstance(topology, Mapping) else None
    return version if isinstance(version, str) and version else None


def release_input(bd: BundleDeployment, chart: Path, cluster: Cluster | None) -> ReleaseInput:
    """What helm-controller would install for `bd` from the chart archive `chart`."""
    options = bd.spec.options
    helm = helm_options(options, obj=f"BundleDeployment {bd.metadata.namespace}/{bd.metadata.name}")
    install = helm.install
    skip_crds = install is not None and (install.skipCRDs or install.crds is CRDsPolicy.SKIP)
    return ReleaseInput(
        chart=chart,
        name=helm_release_name(helm.releaseName or bundle_name(bd)),
        namespace=options.namespace,
        values=dict(helm.values or {}),
        kube_version=cluster_kube_version(cluster),
        include_crds=not skip_crds,
        tests=helm.test is not None and bool(helm.test.enable),
    )


VALUES_FILE = "values.yaml"


def with_values_files(archive: bytes, files: list[str], *, ignore_missing: bool) -> bytes:
    """The chart archive as source-controller builds it for a HelmChart with `valuesFiles`: its
    values.yaml replaced by the files merged in order, a later file's keys winning and maps
    merged key by key (`values.yaml` in the list is the chart's own); TemplateError for a file
    the chart does not have, unless `ignore_missing`."""
    try:
        chart_files = package.archive_files(archive, source="the chart")
    except InvalidInputError as err:
        raise TemplateError(err.message) from None
    merged: dict[str, Any] = {}
    for name in files:
        relative = name.removeprefix("./")
        if relative not in chart_files:
            if ignore_missing:
                continue
            raise TemplateError(
                f"valuesFiles: the chart has no {name} (ignoreMissingValuesFiles: true leaves "
                "out the files a chart lacks)"
            )
        try:
            loaded = yaml.safe_load(chart_files[relative]) or {}
        except yaml.YAMLError as err:
            raise TemplateError(f"valuesFiles: {name} is not YAML: {_one_line(err)}") from None
        if not isinstance(loaded, dict):
            raise TemplateError(f"valuesFiles: {name} is not a mapping of values")
        merged = deep_merge(merged, loaded)  # as Flux merges values files
    text = yaml.safe_dump(merged, sort_keys=False).encode()
    return package.with_file(archive, VALUES_FILE, text, source="the chart")


def render_release(engine: HelmEngine, release: ReleaseInput) -> list[Obj]:
    """The objects of the release, in Helm's order; TemplateError when the chart fails to
    render or renders something that is not YAML objects."""
    text = engine.render(release)
    if len(text) > MAX_RENDERED_BYTES:
        raise TemplateError(f"the chart renders more than the {MAX_RENDERED_BYTES >> 20} MiB cap")
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError as err:
        raise TemplateError(f"the chart renders invalid YAML: {_one_line(err)}") from None
    objects = [doc for doc in documents if doc is not None]
    for doc in objects:
        if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str):
            raise TemplateError("the chart renders a document that is not a Kubernetes object")
    return release_manifest(objects, tests=release.tests)


def release_manifest(objects: list[Obj], *, tests: bool) -> list[Obj]:
    """The objects of Helm's release manifest: hooks left out, test hooks kept (and marked
    `bundler.dev/helm-hook: test`) when the release runs its tests."""
    kept = []
    for obj in objects:
        events = hook_events(obj)
        if not events:
            kept.append(obj)
        elif tests and events & TEST_HOOKS:
            meta = obj.setdefault("metadata", {})
            if not isinstance(meta.get("annotations"), dict):
                meta["annotations"] = {}
            meta["annotations"][ANNOTATION_HELM_HOOK] = "test"
            kept.append(obj)
    return kept


def hook_events(obj: Obj) -> frozenset[str]:
    """The Helm hook events an object declares (`helm.sh/hook: pre-install,post-upgrade`)."""
    annotations = _get(obj, "metadata", "annotations")
    value = annotations.get(HELM_HOOK) if isinstance(annotations, Mapping) else None
    if not isinstance(value, str):
        return frozenset()
    return frozenset(e.strip() for e in value.split(",") if e.strip())


def _get(value: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def _one_line(err: Exception) -> str:
    return " ".join(str(err).split())
