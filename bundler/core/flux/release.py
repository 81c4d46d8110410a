"""The `spec` of the Flux HelmRelease (helm.toolkit.fluxcd.io/v2) for one BundleDeployment.

bundler sets what it owns (chart reference, release name, target namespace, dependencies,
kubeconfig, values, valuesFrom) and passes the Flux fields of `options.helm` through under Flux's
own names, with two defaults of its own: `install.createNamespace: true` and
`driftDetection: {mode: warn}`; `storageNamespace` defaults to the release namespace. Where
bundler's API admits something Flux's does not (Flux's CEL rules, which bundler's CRDs cannot
carry), `check_release_options` says so here rather than the API server later.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bundler.core.flux import KUBECONFIG_SECRET_KEY

HELM_RELEASE_API_VERSION = "helm.toolkit.fluxcd.io/v2"
DEFAULT_INTERVAL = "10m"
# Unless a Bundle says otherwise, Flux checks each release for changes made on the cluster and
# reports them (Drifted), changing nothing: that report is the BundleDeployment's Modified state,
# which Fleet users expect without asking. `mode: enabled` also corrects; `disabled` turns it off.
DEFAULT_DRIFT_DETECTION = {"mode": "warn"}

# options.helm fields copied to the HelmRelease spec as they are: their names are Flux's.
PASS_THROUGH = (
    "timeout",
    "maxHistory",
    "upgrade",
    "rollback",
    "uninstall",
    "test",
    "driftDetection",
    "suspend",
    "serviceAccountName",
    "persistentClient",
    "commonMetadata",
    "postRenderers",
    "postRenderStrategy",
    "waitStrategy",
    "healthCheckExprs",
)
# options.helm fields release_spec writes with bundler's defaults or into other places.
WRITTEN = ("interval", "install", "storageNamespace", "values", "valuesFrom", "releaseName")
_RETRY_ON_FAILURE = "RetryOnFailure"
_DRIFT_TARGET_FIELDS = frozenset(
    {"group", "version", "kind", "name", "namespace", "annotationSelector", "labelSelector"}
)


class UnsupportedOptionError(ValueError):
    """An option Flux cannot take; `field` is its path below options.helm."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


@dataclass(frozen=True)
class ReleasePlacement:
    """Names and places the HelmRelease refers to, decided by the caller."""

    release_name: str
    namespace: str
    depends_on: Sequence[str]
    depends_on_namespace: str
    kubeconfig_secret: str | None = None


def release_spec(
    helm: dict[str, Any], chart: dict[str, Any], placement: ReleasePlacement
) -> dict[str, Any]:
    """The HelmRelease spec from `helm` (options.helm as wire JSON) and the chart reference.

    `chart` is either `{"chart": {...}}` or `{"chartRef": {...}}`.
    """
    check_release_options(helm)
    spec: dict[str, Any] = {"interval": helm.get("interval", DEFAULT_INTERVAL), **chart}
    spec["releaseName"] = placement.release_name
    spec["targetNamespace"] = placement.namespace
    # Explicit, so Helm's release records sit beside the release on every cluster and in every mode
    # (Flux's default is the HelmRelease's namespace), unless the Bundle names another.
    spec["storageNamespace"] = helm.get("storageNamespace", placement.namespace)
    if placement.depends_on:
        spec["dependsOn"] = [
            {"name": name, "namespace": placement.depends_on_namespace}
            for name in placement.depends_on
        ]
    if placement.kubeconfig_secret is not None:
        secret_ref = {"name": placement.kubeconfig_secret, "key": KUBECONFIG_SECRET_KEY}
        spec["kubeConfig"] = {"secretRef": secret_ref}
    spec["install"] = {"createNamespace": True, **helm.get("install", {})}
    spec["driftDetection"] = dict(DEFAULT_DRIFT_DETECTION)
    spec.update({name: helm[name] for name in PASS_THROUGH if name in helm})
    if helm.get("values"):
        spec["values"] = helm["values"]
    if helm.get("valuesFrom"):
        spec["valuesFrom"] = helm["valuesFrom"]
    return spec


def check_release_options(helm: Mapping[str, Any]) -> None:
    """UnsupportedOptionError for what the HelmRelease CRD's own rules refuse in `helm`
    (options.helm as wire JSON, merged)."""
    if "strategy" in helm.get("install", {}).get("remediation", {}):
        raise UnsupportedOptionError(
            "install.remediation.strategy",
            "Flux takes a remediation strategy for upgrades only (upgrade.remediation.strategy)",
        )
    for action in ("install", "upgrade"):
        strategy = helm.get(action, {}).get("strategy", {})
        if "retryInterval" in strategy and strategy.get("name") != _RETRY_ON_FAILURE:
            raise UnsupportedOptionError(
                f"{action}.strategy.retryInterval",
                f"applies to strategy {_RETRY_ON_FAILURE} only, not {strategy.get('name')}",
            )
    rules = helm.get("driftDetection", {}).get("ignore", [])
    for index, rule in enumerate(rules):
        unknown = sorted(set(rule.get("target", {})) - _DRIFT_TARGET_FIELDS)
        if unknown:
            raise UnsupportedOptionError(
                f"driftDetection.ignore[{index}].target",
                f"unknown fields {unknown}; Flux accepts {sorted(_DRIFT_TARGET_FIELDS)}",
            )
