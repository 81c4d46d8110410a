"""One Fleet bundle (a fleet.yaml's helm part, the GitRepo's targets) as a bundler Bundle.

Pure: the caller reads the files (the fleet.yaml, its valuesFiles, the GitRepo) and publishes the
charts kept in the repository; `convert_bundle` gets them parsed and located, and returns the
Bundle as a document plus notes naming FILE:LINE for everything it did not convert (or converted
with a difference in meaning). What it maps, field by field, is the table of
docs/migrating-from-fleet.md; the rules that need more than a rename:

- the bundle's name is Fleet's (`GITREPO-PATH`, bundler.core.fleet.names), and so is the default
  release name (written out when fleet.yaml's `name` renames the bundle);
- the release namespace is the GitRepo's `targetNamespace`, else `namespace`, else
  `defaultNamespace`, else `default`, per target as well;
- `helm.valuesFiles` (files of the repository, not of the chart) are merged into `values`, and
  Fleet's templates converted, by bundler.core.fleet.values (`disablePreProcess` also sets
  `disableTemplating`);
- the GitRepo's targets and the customizations become one target list (bundler.core.fleet.
  targets); a customization's options override the Bundle's as Fleet merges them: values key by
  key, booleans switched on only, `diff.comparePatches` added to the Bundle's (so the target's
  `driftDetection.ignore` is the union, bundler replacing lists);
- Helm's behaviour Fleet asks for is written as Flux's equivalent (bundler.core.fleet.helm), and
  `correctDrift` and `diff` as `driftDetection` (bundler.core.fleet.drift).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bundler.core.fleet.drift import FleetDrift
from bundler.core.fleet.helm import FleetHelm
from bundler.core.fleet.names import bundle_name
from bundler.core.fleet.notes import Located, Note, NoteKind, Notes
from bundler.core.fleet.shapes import TARGET, check_fleet_yaml, check_list
from bundler.core.fleet.targets import FleetTarget, combine, criteria_of
from bundler.core.fleet.values import FleetValues
from bundler.errors import InvalidInputError

API_VERSION = "bundler.dev/v1alpha1"
DEFAULT_NAMESPACE = "default"
# Fleet's target for a GitRepo without targets: the workspace's ClusterGroup `default`.
DEFAULT_TARGET = {"name": "default", "clusterGroup": "default"}
OCI = "oci://"
# The fleet.yaml fields a Bundle has an equivalent for (the rest is reported).
_CONVERTED = frozenset(
    {
        "name",
        "labels",
        "namespace",
        "defaultNamespace",
        "helm",
        "targetCustomizations",
        "targets",
        "overrideTargets",
        "targetCustomizationMode",
        "diff",
        "correctDrift",
        "keepResources",
        "paused",
        "rolloutStrategy",
        "dependsOn",
        "serviceAccount",
    }
)
_WHY_NOT = {
    "kustomize": "bundler deploys Helm charts, not kustomize directories; a kustomize overlay "
    "of a chart's output is a post-renderer (helm.postRenderers)",
    "yaml": "raw-YAML overlays have no equivalent; a patch of a chart's output is a "
    "post-renderer (helm.postRenderers)",
    "imageScans": "Fleet's image scans write to git; bundler resolves images per Bundle "
    "(spec.images) and `bundler images update` writes tags to git",
    "namespaceLabels": "bundler does not label the release namespace (Helm creates it bare); "
    "create it beforehand with its labels and set install.createNamespace: false",
    "namespaceAnnotations": "bundler does not annotate the release namespace (Helm creates it "
    "bare); create it beforehand and set install.createNamespace: false",
    "deleteNamespace": "Flux never deletes the release namespace on uninstall",
    "deleteCRDResources": "Flux's uninstall leaves the chart's CRDs, as Helm does",
    "ignore": "bundler's states come from Flux's conditions; no condition can be ignored",
    "overwrites": "no equivalent",
    "downstreamResources": "bundler copies workspace objects to clusters as values only: name "
    "them in valuesFrom with source: Management and label them bundler.dev/deliver=true",
    "createNamespace": "bundler creates the release namespace unless "
    "helm.install.createNamespace is false",
    "allowedTargetNamespaceSelector": "no equivalent: bundler's tenant boundary is the workspace",
    "helmOpOptions": "no equivalent",
    "forceSyncGeneration": "no equivalent: a change of the Bundle redeploys",
    "targetRestrictions": "targets come from the GitRepo and the customizations",
}
_TARGET_CONVERTED = frozenset(
    {
        "name",
        "clusterName",
        "clusterSelector",
        "clusterGroup",
        "clusterGroupSelector",
        "doNotDeploy",
        "helm",
        "namespace",
        "defaultNamespace",
        "diff",
        "correctDrift",
        "serviceAccount",
    }
)
_ROLLOUT_FIELDS = (
    "maxUnavailable",
    "maxUnavailablePartitions",
    "autoPartitionSize",
    "autoPartitionThreshold",
    "maxNew",
)
_PARTITION_FIELDS = (
    "name",
    "maxUnavailable",
    "clusterName",
    "clusterSelector",
    "clusterGroup",
    "clusterGroupSelector",
)


@dataclass(frozen=True)
class GitRepo:
    """What a Bundle takes from the GitRepo holding it."""

    name: str
    namespace: str
    targets: list[Mapping[str, Any]] = field(default_factory=list)
    target_namespace: str | None = None
    keep_resources: bool = False
    paused: bool = False
    correct_drift: Mapping[str, Any] | None = None
    helm_secret_name: str | None = None
    service_account: str | None = None
    located: Located | None = None
    # the cluster selectors of the workspace's ClusterGroups given with the GitRepo, by name
    groups: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Chart:
    """Where a chart is for bundler: a repository or registry base, its name, a version."""

    repo: str
    chart: str
    version: str | None = None
    insecure: bool = False


@dataclass(frozen=True)
class BundleSource:
    """One Fleet bundle as read: its directory (relative to the repository's root, `.` for the
    root), its fleet.yaml (an empty mapping when it has none), the valuesFiles it names, read
    (by the name written), and the charts of the repository its helm blocks name, published
    (by the block's path: `helm`, `targetCustomizations[0].helm`), or why not."""

    path: str
    fleet: Located
    values_files: Mapping[str, Located] = field(default_factory=dict)
    local_charts: Mapping[str, Chart] = field(default_factory=dict)
    chart_problems: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Imported:
    """A Bundle document (None when the bundle could not become one), and the notes."""

    name: str
    document: dict[str, Any] | None
    notes: Notes


def customization_lists(body: Mapping[str, Any]) -> list[tuple[str, list[Any]]]:
    """The fleet.yaml's customizing target lists: `targets` first, then `targetCustomizations`
    (Fleet appends the latter to the former)."""
    found = []
    for key in ("targets", "targetCustomizations"):
        value = body.get(key)
        if isinstance(value, list):
            found.append((key, value))
    return found


def helm_blocks(body: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """Every helm block of a fleet.yaml with its path: the bundle's, then each
    customization's."""
    blocks: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(body.get("helm"), Mapping):
        blocks.append(("helm", body["helm"]))
    for key, entries in customization_lists(body):
        for index, entry in enumerate(entries):
            if isinstance(entry, Mapping) and isinstance(entry.get("helm"), Mapping):
                blocks.append((f"{key}[{index}].helm", entry["helm"]))
    return blocks


def local_chart(helm: Mapping[str, Any]) -> str | None:
    """The path of the chart a helm block names in the repository, or None when it names one
    elsewhere (a repository, a registry, a URL) or none."""
    chart, repo = helm.get("chart"), helm.get("repo")
    if not isinstance(chart, str) or not chart or repo:
        return None
    if "://" in chart:
        return None
    return chart


def _chart_of(helm: Mapping[str, Any]) -> Chart | str | None:
    """Where a helm block's chart is: a Chart, None when it names no chart, or a string saying
    why it cannot be read (a go-getter URL)."""
    chart, repo = helm.get("chart") or "", helm.get("repo") or ""
    version = helm.get("version") or None
    if not chart and not repo:
        return None
    if isinstance(chart, str) and chart.startswith(OCI):
        base, _, name = chart.rstrip("/").rpartition("/")
        return Chart(base, name, version)
    if isinstance(repo, str) and repo.startswith(OCI) and not chart:
        base, _, name = repo.rstrip("/").rpartition("/")
        return Chart(base, name, version)
    if repo:
        return Chart(str(repo), str(chart), version)
    return (
        f"the chart {chart} is a URL that is not a Helm repository or an OCI registry; publish "
        "it (`bundler chart push`) and name it from there"
    )


class _Converter:
    """The conversion of one bundle; every method adds its notes to `notes`."""

    def __init__(self, source: BundleSource, gitrepo: GitRepo) -> None:
        self.source = source
        self.gitrepo = gitrepo
        self.fleet = source.fleet
        self.body: Mapping[str, Any] = source.fleet.body
        self.notes = Notes()
        self.values = FleetValues(self.fleet, source.values_files, self.notes)
        self.drift = FleetDrift(self.fleet, gitrepo.correct_drift, self.notes)
        self.helm = FleetHelm(self.fleet, self.values, self.notes)

    # -- the whole bundle --------------------------------------------------------------------

    def bundle(self) -> Imported:
        check_fleet_yaml(self.fleet)
        body = self.body
        default_name = bundle_name(self.gitrepo.name, self.source.path)
        name = str(body.get("name") or default_name)
        helm_raw: Mapping[str, Any] = body.get("helm") or {}
        for key in body:
            if key not in _CONVERTED:
                self.notes.dropped(self.fleet, key, _WHY_NOT.get(key, "no equivalent in bundler"))
        chart = self._chart("helm", helm_raw)
        if chart is None:
            return Imported(name, None, self.notes)
        templating = not helm_raw.get("disablePreProcess")
        helm = self.helm.options("helm", helm_raw, templating=templating, base=True)
        helm = {**_chart_fields(chart), **helm}
        if body.get("name") and not helm.get("releaseName"):
            helm["releaseName"] = default_name  # Fleet's release name stays GITREPO-PATH
        drift = self.drift.drift("", body, base_ignore=[])
        if drift:
            helm["driftDetection"] = drift
        service_account = body.get("serviceAccount") or self.gitrepo.service_account
        if service_account:
            helm["serviceAccountName"] = service_account
            self.notes.note(
                self.fleet,
                "serviceAccount",
                "helm-controller impersonates it, in the HelmRelease's namespace: the agent's "
                "(bundler-system) on each cluster in pull mode; create it there with the rights "
                "the release needs",
            )
        if self.gitrepo.helm_secret_name:
            helm["secretRef"] = {"name": self.gitrepo.helm_secret_name}
            self._gitrepo_note(
                "spec.helmSecretName",
                "the Secret must hold registry credentials for bundler: type "
                "kubernetes.io/basic-auth (username, password) or kubernetes.io/dockerconfigjson,"
                " or Opaque labelled bundler.dev/registry-credentials=true",
            )
        namespace = self._namespace(body)
        spec: dict[str, Any] = {"helm": helm, "namespace": namespace}
        all_matches = body.get("targetCustomizationMode") == "AllMatches"
        if all_matches:
            spec["targetMode"] = "AllMatches"
        spec["targets"] = self._targets(namespace, all_matches, drift.get("ignore", []))
        if body.get("keepResources") or self.gitrepo.keep_resources:
            spec["keepResources"] = True
        if body.get("paused") or self.gitrepo.paused:
            spec["paused"] = True
        rollout = self._rollout(body.get("rolloutStrategy"))
        if rollout:
            spec["rolloutStrategy"] = rollout
        depends = self._depends_on(body.get("dependsOn"))
        if depends:
            spec["dependsOn"] = depends
        metadata: dict[str, Any] = {"name": name, "namespace": self.gitrepo.namespace}
        labels = body.get("labels")
        if isinstance(labels, Mapping) and labels:
            metadata["labels"] = dict(labels)
        document = {"apiVersion": API_VERSION, "kind": "Bundle", "metadata": metadata, "spec": spec}
        return Imported(name, document, self.notes)

    def _gitrepo_note(self, path: str, message: str) -> None:
        if self.gitrepo.located is not None:
            self.notes.note(self.gitrepo.located, path, message)

    def _namespace(self, options: Mapping[str, Any], base: Mapping[str, Any] | None = None) -> str:
        """The release namespace for `options` (merged over `base`, for a customization)."""
        base = base or {}
        target = options.get("namespace") or base.get("namespace")
        default = options.get("defaultNamespace") or base.get("defaultNamespace")
        return str(self.gitrepo.target_namespace or target or default or DEFAULT_NAMESPACE)

    # -- the chart -------------------------------------------------------------------------

    def _chart(self, path: str, helm: Mapping[str, Any]) -> Chart | None:
        """Where the chart of the helm block at `path` is; None (with a note) when it is not a
        chart bundler can deploy."""
        if path in self.source.chart_problems:
            self.notes.dropped(self.fleet, f"{path}.chart", self.source.chart_problems[path])
            return None
        if path in self.source.local_charts:
            return self.source.local_charts[path]
        found = _chart_of(helm)
        if isinstance(found, Chart):
            return found
        if isinstance(found, str):
            self.notes.dropped(self.fleet, f"{path}.chart", found)
            return None
        if path != "helm":
            return None
        what = "kustomize directory" if "kustomize" in self.body else "directory of manifests"
        self.notes.dropped(
            self.fleet,
            "",
            f"the bundle in {self.source.path} is a {what}, not a Helm chart: bundler deploys "
            "charts; put these objects in a chart and publish it",
        )
        return None

    # -- targets ---------------------------------------------------------------------------

    def _selecting(self) -> list[FleetTarget]:
        """The targets that select clusters: fleet.yaml's overrideTargets, else the GitRepo's,
        else Fleet's default (the cluster group `default`)."""
        override = self.body.get("overrideTargets")
        if isinstance(override, list) and override:
            raw, where, located = override, "overrideTargets", self.fleet
        elif self.gitrepo.targets:
            raw, where = self.gitrepo.targets, "spec.targets"
            located = self.gitrepo.located or self.fleet
        else:
            return [FleetTarget(DEFAULT_TARGET["name"], {"clusterGroup": DEFAULT_TARGET["name"]})]
        check_list(located, raw, where, TARGET)
        selecting = []
        for index, entry in enumerate(raw):
            name = str(entry.get("name") or f"target{index:03d}")
            criteria = criteria_of(entry)
            if not criteria:
                self.notes.note(
                    located, f"{where}[{index}]", "names no cluster: it selects none, as in Fleet"
                )
                continue
            selecting.append(
                FleetTarget(
                    name,
                    criteria,
                    do_not_deploy=bool(entry.get("doNotDeploy")),
                    where=located.at(f"{where}[{index}]"),
                )
            )
        return selecting

    def _customizing(self, namespace: str, base_ignore: list[Any]) -> list[FleetTarget]:
        found = []
        position = 0
        for key, entries in customization_lists(self.body):
            for index, entry in enumerate(entries):
                path = f"{key}[{index}]"
                if not isinstance(entry, Mapping):
                    raise InvalidInputError("must be a mapping", obj=self.fleet.at(path))
                name = str(entry.get("name") or f"target{position:03d}")
                position += 1
                criteria = criteria_of(entry)
                if not criteria:
                    self.notes.note(
                        self.fleet, path, "names no cluster: it customizes none, as in Fleet"
                    )
                    continue
                overrides = self._overrides(path, entry, namespace, base_ignore)
                if overrides is None:
                    continue
                found.append(
                    FleetTarget(
                        name,
                        criteria,
                        overrides,
                        do_not_deploy=bool(entry.get("doNotDeploy")),
                        where=self.fleet.at(path),
                    )
                )
        return found

    def _overrides(
        self, path: str, entry: Mapping[str, Any], namespace: str, base_ignore: list[Any]
    ) -> dict[str, Any] | None:
        """The bundler target fields of one customization; None (noted) when its chart cannot
        be deployed."""
        for key in entry:
            if key not in _TARGET_CONVERTED:
                why = _WHY_NOT.get(key, "no equivalent in bundler")
                if key == "keepResources":
                    why = "bundler keeps resources per Bundle (spec.keepResources), not per target"
                self.notes.dropped(self.fleet, f"{path}.{key}", why)
        overrides: dict[str, Any] = {}
        raw_helm: Mapping[str, Any] = entry.get("helm") or {}
        base_helm: Mapping[str, Any] = self.body.get("helm") or {}
        helm: dict[str, Any] = {}
        if raw_helm:
            chart_fields: dict[str, Any] = {}
            if any(raw_helm.get(k) for k in ("chart", "repo")):
                chart = self._chart(f"{path}.helm", raw_helm)
                if chart is None:
                    return None
                chart_fields = _chart_fields(chart)
            elif raw_helm.get("version"):
                chart_fields = {"version": raw_helm["version"]}
            templating = not (
                base_helm.get("disablePreProcess") or raw_helm.get("disablePreProcess")
            )
            helm = {
                **chart_fields,
                **self.helm.options(f"{path}.helm", raw_helm, templating=templating, base=False),
            }
            if raw_helm.get("disablePreProcess") and not base_helm.get("disablePreProcess"):
                self.notes.note(
                    self.fleet,
                    f"{path}.helm.disablePreProcess",
                    "the Bundle's values were converted to bundler's templates; with templating "
                    "off for these clusters they are passed as converted, not as Fleet wrote them",
                )
        drift = self.drift.drift(f"{path}.", entry, base_ignore)
        if drift:
            helm["driftDetection"] = drift
        if entry.get("serviceAccount"):
            helm["serviceAccountName"] = entry["serviceAccount"]
        if helm:
            overrides["helm"] = helm
        target_namespace = self._namespace(entry, self.body)
        if target_namespace != namespace:
            overrides["namespace"] = target_namespace
        return overrides

    def _targets(self, namespace: str, all_matches: bool, base_ignore: list[Any]) -> list[Any]:
        selecting = self._selecting()
        customizing = self._customizing(namespace, base_ignore)
        combined = combine(
            selecting, customizing, all_matches=all_matches, groups=self.gitrepo.groups
        )
        for custom, select, why in combined.problems:
            self.notes.items.append(
                _problem(
                    custom,
                    f"not combined with the GitRepo target {select.name}: {why}; give the "
                    "ClusterGroups' definitions in the --gitrepo file to combine them exactly",
                )
            )
        if all_matches and any(s.do_not_deploy for s in selecting):
            self.notes.note(
                self.fleet,
                "targetCustomizationMode",
                "with AllMatches a target's doNotDeploy keeps a cluster off even when an earlier "
                "target selected it (Fleet: the first selecting target decides)",
            )
        return combined.targets

    # -- the rest --------------------------------------------------------------------------

    def _rollout(self, raw: Any) -> dict[str, Any]:
        if not isinstance(raw, Mapping):
            return {}
        rollout = {k: raw[k] for k in _ROLLOUT_FIELDS if raw.get(k) is not None}
        partitions = []
        for index, partition in enumerate(raw.get("partitions") or []):
            if not isinstance(partition, Mapping):
                continue
            kept = {k: partition[k] for k in _PARTITION_FIELDS if partition.get(k) is not None}
            kept.setdefault("name", f"partition{index:03d}")
            partitions.append(kept)
        if partitions:
            rollout["partitions"] = partitions
            self.notes.note(
                self.fleet,
                "rolloutStrategy.partitions",
                "clusters no partition picks deploy in bundler (in automatic partitions after "
                "the manual ones); Fleet leaves them in none, so they never deploy",
            )
        return rollout

    def _depends_on(self, raw: Any) -> list[dict[str, str]]:
        found = []
        for index, entry in enumerate(raw or []):
            where = f"dependsOn[{index}]"
            if not isinstance(entry, Mapping):
                raise InvalidInputError("must be a mapping", obj=self.fleet.at(where))
            if entry.get("name"):
                found.append({"name": str(entry["name"])})
            if entry.get("selector") is not None:
                self.notes.dropped(
                    self.fleet,
                    f"{where}.selector",
                    "bundler depends on Bundles by name: name each Bundle the selector picks",
                )
            if entry.get("acceptedStates"):
                self.notes.dropped(
                    self.fleet,
                    f"{where}.acceptedStates",
                    "a dependency is met when its Bundle is Ready on the cluster",
                )
        return found


def _problem(custom: FleetTarget, message: str) -> Note:
    return Note(NoteKind.NOT_CONVERTED, custom.where, f"customization {custom.name}", message)


def _chart_fields(chart: Chart) -> dict[str, Any]:
    fields: dict[str, Any] = {"repo": chart.repo, "chart": chart.chart}
    if chart.version:
        fields["version"] = chart.version
    if chart.insecure:
        fields["insecure"] = True
    return fields


def convert_bundle(source: BundleSource, gitrepo: GitRepo) -> Imported:
    """The Bundle for one Fleet bundle of `gitrepo`; InvalidInputError (naming FILE:LINE) for
    a fleet.yaml Fleet itself would refuse."""
    return _Converter(source, gitrepo).bundle()
