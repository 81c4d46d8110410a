"""`spec.helm` of a Bundle (and of each target's overrides and each BundleDeployment's options).

Fields bundler interprets (repo, chart, version, values, templating, credentials) sit beside fields
passed through to the Flux HelmRelease (helm.toolkit.fluxcd.io/v2) under Flux's own names and with
Flux's defaults (install, upgrade, rollback, uninstall, test, driftDetection, postRenderers, ...),
and, under `source`, to the chart's source (bundler.api.flux_source). Every field is optional here:
a target's `helm` overrides only what it sets, and the merged result is checked for repo and chart
by the core. Flux's cross-field rules (a retryInterval only with RetryOnFailure, source fields of
one source kind) are checked by the core, on the merged result.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from bundler.api.base import ApiModel
from bundler.api.flux_source import SourceOptions
from bundler.api.meta import Duration, FreeForm, LocalObjectReference
from bundler.api.post_render import PostRenderer


class CRDsPolicy(StrEnum):
    SKIP = "Skip"
    CREATE = "Create"
    CREATE_REPLACE = "CreateReplace"


class Remediation(ApiModel):
    """What Flux does when the Helm action fails (passed through as is)."""

    retries: int | None = None
    """Attempts after a failure before Flux gives up, with remediation between them; a negative
    number retries forever (Flux's default 0)."""
    ignoreTestFailures: bool | None = None
    """Do not remediate when Helm tests fail after the action (Flux's default:
    test.ignoreFailures)."""
    remediateLastFailure: bool | None = None
    """Remediate the last failure too, once no retries remain (Flux's default false; for upgrades
    true when retries is above 0)."""
    strategy: str | None = Field(default=None, pattern=r"^(rollback|uninstall)$")
    """upgrade.remediation only: rollback (Flux's default) or uninstall. Refused under
    install.remediation, which Flux does not give a strategy."""


class ActionStrategyName(StrEnum):
    REMEDIATE_ON_FAILURE = "RemediateOnFailure"
    RETRY_ON_FAILURE = "RetryOnFailure"


class ActionStrategy(ApiModel):
    """How Flux reacts to a failed install or upgrade (helm-controller v1.4.0, Flux v2.7.0)."""

    name: ActionStrategyName
    """RemediateOnFailure (Flux's default: remediate as remediation says, then stop) or
    RetryOnFailure (no remediation: try the action again every retryInterval)."""
    retryInterval: Duration | None = None
    """RetryOnFailure only: how long Flux waits before trying again (Flux's default 5m)."""


class ServerSideApplyMode(StrEnum):
    ENABLED = "enabled"
    DISABLED = "disabled"
    AUTO = "auto"


class ChartNameChangeStrategy(StrEnum):
    REINSTALL = "Reinstall"
    IN_PLACE_UPDATE = "InPlaceUpdate"


class InstallOptions(ApiModel):
    """Helm install settings, passed through to the HelmRelease as spec.install (Flux's names and
    defaults), except createNamespace, which bundler sets to true unless the Bundle says false."""

    strategy: ActionStrategy | None = None
    """What Flux does after a failed install: RemediateOnFailure (Flux's default) or
    RetryOnFailure with a retryInterval (helm-controller v1.4.0, Flux v2.7.0)."""
    remediation: Remediation | None = None
    """What Flux does when the install fails (Flux's default: nothing)."""
    crds: CRDsPolicy | None = None
    """The chart's crds/ directory: Skip, Create (Flux's default on install: create missing CRDs,
    update none) or CreateReplace (create and update)."""
    disableHooks: bool | None = None
    """Do not run the chart's hooks on install."""
    disableOpenAPIValidation: bool | None = None
    """Do not validate the rendered manifests against the Kubernetes OpenAPI schema."""
    disableWait: bool | None = None
    """Do not wait for the resources to be ready after the install."""
    disableWaitForJobs: bool | None = None
    """Do not wait for Jobs to complete after the install."""
    disableSchemaValidation: bool | None = None
    """Do not validate the values against the chart's values.schema.json."""
    disableTakeOwnership: bool | None = None
    """Do not take ownership of existing objects the release contains (Flux's default false:
    Helm adopts them)."""
    replace: bool | None = None
    """Re-use the release name when it is a deleted release still in the history."""
    skipCRDs: bool | None = None
    """Do not install the chart's CRDs (deprecated by Flux: use crds: Skip)."""
    createNamespace: bool | None = None
    """Create the release namespace when it does not exist. bundler's default true (Flux's is
    false); set false when the namespace is prepared for the release, e.g. for a
    serviceAccountName that may not create namespaces. Helm never deletes it."""
    serverSideApply: bool | None = None
    """Apply the release's objects with server-side apply (Flux's default true; helm-controller
    v1.5.0, Flux v2.8.0)."""
    timeout: Duration | None = None
    """How long each Kubernetes operation of the install may take (Flux's default:
    helm.timeout); a Go duration such as 5m."""


class UpgradeOptions(ApiModel):
    """Helm upgrade settings, passed through to the HelmRelease as spec.upgrade (Flux's names and
    defaults)."""

    strategy: ActionStrategy | None = None
    """What Flux does after a failed upgrade: RemediateOnFailure (Flux's default) or
    RetryOnFailure with a retryInterval (helm-controller v1.4.0, Flux v2.7.0)."""
    remediation: Remediation | None = None
    """What Flux does when the upgrade fails (Flux's default: nothing; with retries, a rollback
    or an uninstall as strategy says)."""
    crds: CRDsPolicy | None = None
    """The chart's crds/ directory: Skip (Flux's default on upgrade), Create (create missing CRDs)
    or CreateReplace (create and update)."""
    cleanupOnFail: bool | None = None
    """Delete the resources a failed upgrade created."""
    disableHooks: bool | None = None
    """Do not run the chart's hooks on upgrade."""
    disableOpenAPIValidation: bool | None = None
    """Do not validate the rendered manifests against the Kubernetes OpenAPI schema."""
    disableSchemaValidation: bool | None = None
    """Do not validate the values against the chart's values.schema.json."""
    disableTakeOwnership: bool | None = None
    """Do not take ownership of existing objects the release contains (Flux's default false:
    Helm adopts them)."""
    disableWait: bool | None = None
    """Do not wait for the resources to be ready after the upgrade."""
    disableWaitForJobs: bool | None = None
    """Do not wait for Jobs to complete after the upgrade."""
    force: bool | None = None
    """Force resource updates through a replacement strategy (Helm's --force)."""
    preserveValues: bool | None = None
    """Reuse the last release's values and merge the new ones in (the release is then no longer
    declared by the Bundle alone)."""
    serverSideApply: ServerSideApplyMode | None = None
    """enabled, disabled or auto (Flux's default: as the release's last revision was applied);
    helm-controller v1.5.0, Flux v2.8.0."""
    chartNameChangeStrategy: ChartNameChangeStrategy | None = None
    """When the chart's name changes: Reinstall (Flux's default: uninstall, then install) or
    InPlaceUpdate (upgrade the release); helm-controller v1.6.0, Flux v2.9.0."""
    timeout: Duration | None = None
    """How long each Kubernetes operation of the upgrade may take (Flux's default:
    helm.timeout); a Go duration such as 5m."""


class RollbackOptions(ApiModel):
    """Helm rollback settings (used when Flux remediates a failed upgrade by rolling back), passed
    through to the HelmRelease as spec.rollback."""

    cleanupOnFail: bool | None = None
    """Delete the resources a failed rollback created."""
    disableHooks: bool | None = None
    """Do not run the chart's hooks on rollback."""
    disableWait: bool | None = None
    """Do not wait for the resources to be ready after the rollback."""
    disableWaitForJobs: bool | None = None
    """Do not wait for Jobs to complete after the rollback."""
    force: bool | None = None
    """Force resource updates through a replacement strategy (Helm's --force)."""
    recreate: bool | None = None
    """Restart the pods of the release's workloads (Helm's --recreate-pods, deprecated by Helm;
    Flux built on Helm 4 ignores it)."""
    serverSideApply: ServerSideApplyMode | None = None
    """enabled, disabled or auto (Flux's default: as the revision rolled back to was applied);
    helm-controller v1.5.0, Flux v2.8.0."""
    timeout: Duration | None = None
    """How long each Kubernetes operation of the rollback may take (Flux's default:
    helm.timeout); a Go duration such as 5m."""


class DeletionPropagation(StrEnum):
    BACKGROUND = "background"
    FOREGROUND = "foreground"
    ORPHAN = "orphan"


class UninstallOptions(ApiModel):
    """Helm uninstall settings, passed through to the HelmRelease as spec.uninstall. Flux
    uninstalls when the BundleDeployment is deleted, unless the Bundle keeps resources."""

    deletionPropagation: DeletionPropagation | None = None
    """How the release's objects are deleted: background (Flux's default), foreground or
    orphan."""
    disableHooks: bool | None = None
    """Do not run the chart's hooks on uninstall."""
    disableWait: bool | None = None
    """Do not wait for the resources to be deleted."""
    keepHistory: bool | None = None
    """Keep the release's history, marking it uninstalled."""
    timeout: Duration | None = None
    """How long each Kubernetes operation of the uninstall may take (Flux's default:
    helm.timeout); a Go duration such as 5m."""


class TestFilter(ApiModel):
    """One Helm test to run or to leave out."""

    name: str = Field(min_length=1, max_length=253)
    """Name of the test (of its hook resource)."""
    exclude: bool | None = None
    """true: leave this test out; false (Flux's default): run it, and only the tests named so."""


class TestOptions(ApiModel):
    """Helm test settings, passed through to the HelmRelease as spec.test."""

    enable: bool | None = None
    """Run the chart's Helm tests after each install and upgrade (Flux's default false)."""
    ignoreFailures: bool | None = None
    """Do not remediate when the tests fail."""
    filters: list[TestFilter] | None = None
    """Which tests run: the ones named without exclude, else all but the excluded (Flux's
    default: all)."""
    timeout: Duration | None = None
    """How long each Kubernetes operation of the tests may take (Flux's default:
    helm.timeout); a Go duration such as 5m."""


class DriftDetectionMode(StrEnum):
    ENABLED = "enabled"
    WARN = "warn"
    DISABLED = "disabled"


class DriftIgnoreRule(ApiModel):
    """Changes that drift detection ignores."""

    paths: list[str]
    """JSON Pointers (RFC 6901) to ignore, such as /spec/replicas."""
    target: dict[str, str] | None = None
    """Which of the release's objects the rule applies to, by group, version, kind, name,
    namespace, annotationSelector or labelSelector (other keys are refused); unset: all of
    them."""


class DriftDetection(ApiModel):
    """How Flux treats differences between the release's manifests and the objects on the
    cluster, passed through to the HelmRelease as spec.driftDetection."""

    mode: DriftDetectionMode | None = None
    """enabled (correct drift), warn (report it) or disabled (Flux's default)."""
    ignore: list[DriftIgnoreRule] | None = None
    """Changes to leave alone."""


class ValuesKind(StrEnum):
    SECRET = "Secret"
    CONFIG_MAP = "ConfigMap"


class ValuesSource(StrEnum):
    """Where a valuesFrom object lives."""

    # On the downstream cluster, in the agent's namespace (Flux's own meaning).
    DOWNSTREAM = "Downstream"
    # In the Bundle's workspace on the management cluster, delivered by bundler.
    MANAGEMENT = "Management"


class ValuesReference(ApiModel):
    """A Secret or ConfigMap of Helm values (the HelmRelease's spec.valuesFrom, under Flux's
    field names): an object on the downstream cluster that Flux reads there, or (source:
    Management) one of the Bundle's workspace that bundler delivers to each targeted cluster."""

    kind: ValuesKind
    """Secret or ConfigMap."""
    name: str = Field(min_length=1)
    """Its name: on the downstream cluster, in the agent's namespace (in pull mode and in remote
    mode alike), or, with source: Management, in the Bundle's workspace."""
    source: ValuesSource | None = None
    """Downstream (the default): the object lives on the downstream cluster, in the agent's
    namespace, and Flux reads it there. Management: it lives in the Bundle's workspace on the
    management cluster; the manager copies it into each targeted cluster namespace and the
    HelmRelease reads that copy (pull mode: the agent writes it next to the HelmRelease). Only
    objects labelled bundler.dev/deliver: "true" are delivered (a Secret of type Opaque, or a
    ConfigMap; at most 1 MiB of data); never a Cluster's kubeconfig Secret, a Cluster API
    Secret, a ServiceAccount or bootstrap token, registry credentials or a Secret bundler
    manages. A change of the object's data rolls out like a change of values (a new
    deploymentID, under the rollout strategy); a copy no longer named is deleted."""
    valuesKey: str | None = None
    """The data key holding the values (Flux's default values.yaml)."""
    targetPath: str | None = None
    """A YAML dot path at which the key's single value is merged; unset: the values are merged
    at the root."""
    optional: bool | None = None
    """Ignore the object when it does not exist (other errors still fail the release)."""
    literal: bool | None = None
    """With targetPath: use the key's content verbatim as the value, not parsed with Helm's
    --set syntax (helm-controller v1.6.0, Flux v2.9.0)."""


class CommonMetadata(ApiModel):
    """Labels and annotations Flux puts on every object of the release (helm-controller v1.4.0,
    Flux v2.7.0)."""

    labels: dict[str, str] | None = None
    """Labels added to every object, replacing the chart's label of the same key."""
    annotations: dict[str, str] | None = None
    """Annotations added to every object, replacing the chart's annotation of the same key."""


class PostRenderStrategy(StrEnum):
    NO_HOOKS = "nohooks"
    COMBINED = "combined"
    SEPARATE = "separate"


class WaitStrategyName(StrEnum):
    POLLER = "poller"
    LEGACY = "legacy"


class WaitStrategy(ApiModel):
    """How Helm waits for the release's objects to be ready (helm-controller v1.5.0, Flux
    v2.8.0)."""

    name: WaitStrategyName
    """poller (Flux's default: kstatus, with healthCheckExprs for custom resources) or legacy
    (Helm 3's waiting)."""


class HealthCheckExpr(ApiModel):
    """The health of one kind of custom resource, as CEL expressions over the object
    (helm-controller v1.5.0, Flux v2.8.0); evaluated when Helm waits with the poller
    strategy."""

    apiVersion: str = Field(min_length=1)
    """apiVersion of the custom resource, e.g. cert-manager.io/v1."""
    kind: str | None = None
    """Kind of the custom resource, e.g. Certificate."""
    current: str = Field(min_length=1)
    """CEL expression true when the object has reached its desired state, e.g.
    status.conditions.filter(c, c.type == 'Ready').all(c, c.status == 'True')."""
    inProgress: str | None = None
    """CEL expression true while the object is still progressing."""
    failed: str | None = None
    """CEL expression true when the object has failed."""


class HelmOptions(ApiModel):
    """The chart and how Helm installs it. In a Bundle every field is optional (a target's helm
    overrides only what it sets), but repo and chart must be set in spec.helm or in each
    target's helm; in a BundleDeployment it is the merged, rendered result for one cluster."""

    repo: str | None = None
    """Where the chart lives: an https:// (or http://) Helm repository with an index.yaml, or an
    oci:// registry base, where the chart is the repository <repo>/<chart> tagged with its
    version. No credentials in the URL: use secretRef."""
    chart: str | None = None
    """Name of the chart in the repository (letters, digits, '.', '_' and '-')."""
    version: str | None = None
    """Chart version: exact (6.7.1) or a range in Helm's syntax (6.*, ^6, ~6.1, ">=6.1 <7";
    prereleases only when the range names one), resolved by the manager to one concrete version
    for every cluster (status.resolvedVersion). Unset: the latest stable release, as the range
    "*". Always concrete in a BundleDeployment."""
    releaseName: str | None = None
    """Helm release name on the cluster: lowercase letters, digits, '-' and '.', at most 53
    characters. Default: the Bundle's name (shortened with a hash beyond 53 characters)."""
    values: FreeForm | None = None
    """Helm values (the HelmRelease's spec.values), templated per cluster: `${ ... }`
    expressions read cluster.name, cluster.labels, cluster.values, images.NAME and more, Helm's
    `{{ }}` passes through, `$${` is a literal `${`. A target's values merge into these (maps key
    by key, lists and scalars replaced). Rendered in a BundleDeployment."""
    valuesFrom: list[ValuesReference] | None = None
    """Secrets or ConfigMaps of values (the HelmRelease's spec.valuesFrom): on the downstream
    cluster, or delivered from the Bundle's workspace (source: Management). Flux's precedence:
    the entries merge in order (a later one wins), then the inline values over them (inline
    wins; Fleet's is the opposite). A target's entries are appended to the Bundle's."""
    secretRef: LocalObjectReference | None = None
    """A Secret with the repository's or registry's credentials (kubernetes.io/dockerconfigjson,
    or username and password), in the Bundle's workspace: the manager uses it to resolve versions
    and copies it into each targeted cluster namespace, and the agent gives it to the Flux source.
    Must not be named bundler-agent-token."""
    insecure: bool | None = None
    """oci:// only: Flux speaks plain HTTP to the registry (OCIRepository spec.insecure). Default
    false."""
    timeout: Duration | None = None
    """Passed through to the HelmRelease as spec.timeout: how long each Kubernetes operation of a
    Helm action may take (Flux's default 5m0s). A Go duration: 5m, 1h30m, 10s."""
    pollInterval: Duration | None = None
    """How often the manager resolves a version range (and spec.images) again, so that a newly
    pushed chart or tag rolls out; unset: only when the Bundle changes. Read by the manager only,
    never copied into a BundleDeployment."""
    disableTemplating: bool | None = None
    """true: values are passed as written, no `${ }` templating. Default false. Read by the
    manager only, never copied into a BundleDeployment."""
    interval: Duration | None = None
    """Passed through to the HelmRelease as spec.interval, and the interval of its chart source:
    how often Flux reconciles the release. Default 10m."""
    install: InstallOptions | None = None
    """Helm install settings (the HelmRelease's spec.install)."""
    upgrade: UpgradeOptions | None = None
    """Helm upgrade settings (the HelmRelease's spec.upgrade)."""
    rollback: RollbackOptions | None = None
    """Helm rollback settings (the HelmRelease's spec.rollback)."""
    uninstall: UninstallOptions | None = None
    """Helm uninstall settings (the HelmRelease's spec.uninstall)."""
    test: TestOptions | None = None
    """Helm test settings (the HelmRelease's spec.test)."""
    maxHistory: int | None = Field(default=None, ge=0)
    """Passed through to the HelmRelease as spec.maxHistory: how many Helm revisions are kept; 0
    keeps all (Flux's default 5)."""
    driftDetection: DriftDetection | None = None
    """Drift detection of the release's objects (the HelmRelease's spec.driftDetection). Default
    {mode: warn}: Flux reports changes made on the cluster (the Modified state)."""
    suspend: bool | None = None
    """true: Flux stops reconciling the release (the HelmRelease's spec.suspend); the
    BundleDeployment then says NotReady, reason Suspended. Default false."""
    storageNamespace: str | None = Field(default=None, min_length=1, max_length=63)
    """Where Helm keeps the release's records (its sh.helm.release.v1.* Secrets): a namespace that
    exists on the cluster. Default: the release namespace."""
    serviceAccountName: str | None = Field(default=None, min_length=1, max_length=253)
    """A ServiceAccount helm-controller impersonates to apply the release, so the cluster's RBAC
    bounds what the Bundle may install (Flux's multi-tenancy lockdown). It is
    system:serviceaccount:<HelmRelease namespace>:<name>: the agent's namespace on the
    downstream cluster in pull mode, the cluster namespace in remote mode (impersonated on the
    downstream cluster). Default: helm-controller's own identity (or its
    --default-service-account)."""
    persistentClient: bool | None = None
    """Reuse one Kubernetes client for a whole reconcile (Flux's default true); false for charts
    whose hooks need CRDs created during the same install."""
    commonMetadata: CommonMetadata | None = None
    """Labels and annotations on every object of the release (the HelmRelease's
    spec.commonMetadata), templated per cluster like values (a number or a boolean renders as
    its text)."""
    postRenderers: list[PostRenderer] | None = None
    """Kustomize patches and image overrides applied to what Helm renders, in order (the
    HelmRelease's spec.postRenderers). Templated per cluster like values: `${ ... }` in a patch
    reads cluster.name, cluster.labels, cluster.values and the rest. A target's list replaces the
    Bundle's."""
    postRenderStrategy: PostRenderStrategy | None = None
    """Which manifests the post-renderers see: combined (Flux's default: templates and hooks
    together), nohooks (templates only, Helm 3's way) or separate; helm-controller v1.6.0, Flux
    v2.9.0."""
    waitStrategy: WaitStrategy | None = None
    """How Helm waits for the release's objects to be ready (the HelmRelease's
    spec.waitStrategy)."""
    healthCheckExprs: list[HealthCheckExpr] | None = None
    """Readiness of custom resources as CEL expressions (the HelmRelease's
    spec.healthCheckExprs)."""
    valuesFiles: list[str] | None = None
    """Values files inside the chart (paths from its root), merged in order, a later file's keys
    winning, into the values the release starts from, in place of the chart's values.yaml: list
    values.yaml first to keep the chart's defaults. The Bundle's valuesFrom and values are merged
    over them. Flux's HelmChart valuesFiles, for https:// and oci:// charts alike: the agent
    reads an oci:// chart that has them through a HelmRepository of type oci (source.verify then
    takes only provider and secretRef; proxySecretRef and serviceAccountName are refused)."""
    ignoreMissingValuesFiles: bool | None = None
    """With valuesFiles: leave out the files the chart does not have instead of failing."""
    source: SourceOptions | None = None
    """Settings of the chart's source object (OCIRepository for oci://, HelmRepository for
    https://), under Flux's names: provider, verify, certSecretRef, proxySecretRef,
    serviceAccountName, passCredentials, interval, timeout."""
