"""`spec.helm` of a Bundle (and of each target's overrides and each BundleDeployment's options).

Fields bundler interprets (repo, chart, version, values, templating, credentials) sit beside fields
passed through to the Flux HelmRelease under Flux's own names (install, upgrade, rollback,
uninstall, test, driftDetection, maxHistory, interval, timeout). Every field is optional here: a
target's `helm` overrides only what it sets, and the merged result is checked for repo and chart by
the core.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from bundler.api.base import ApiModel
from bundler.api.meta import Duration, FreeForm, LocalObjectReference


class CRDsPolicy(StrEnum):
    SKIP = "Skip"
    CREATE = "Create"
    CREATE_REPLACE = "CreateReplace"


class Remediation(ApiModel):
    retries: int | None = None
    ignoreTestFailures: bool | None = None
    remediateLastFailure: bool | None = None
    strategy: str | None = Field(default=None, pattern=r"^(rollback|uninstall)$")


class InstallOptions(ApiModel):
    remediation: Remediation | None = None
    crds: CRDsPolicy | None = None
    disableHooks: bool | None = None
    disableOpenAPIValidation: bool | None = None
    disableWait: bool | None = None
    disableWaitForJobs: bool | None = None
    replace: bool | None = None
    skipCRDs: bool | None = None
    timeout: Duration | None = None


class UpgradeOptions(ApiModel):
    remediation: Remediation | None = None
    crds: CRDsPolicy | None = None
    cleanupOnFail: bool | None = None
    disableHooks: bool | None = None
    disableOpenAPIValidation: bool | None = None
    disableWait: bool | None = None
    disableWaitForJobs: bool | None = None
    force: bool | None = None
    preserveValues: bool | None = None
    timeout: Duration | None = None


class RollbackOptions(ApiModel):
    cleanupOnFail: bool | None = None
    disableHooks: bool | None = None
    disableWait: bool | None = None
    disableWaitForJobs: bool | None = None
    force: bool | None = None
    recreate: bool | None = None
    timeout: Duration | None = None


class DeletionPropagation(StrEnum):
    BACKGROUND = "background"
    FOREGROUND = "foreground"
    ORPHAN = "orphan"


class UninstallOptions(ApiModel):
    deletionPropagation: DeletionPropagation | None = None
    disableHooks: bool | None = None
    disableWait: bool | None = None
    keepHistory: bool | None = None
    timeout: Duration | None = None


class TestOptions(ApiModel):
    enable: bool | None = None
    ignoreFailures: bool | None = None
    timeout: Duration | None = None


class DriftDetectionMode(StrEnum):
    ENABLED = "enabled"
    WARN = "warn"
    DISABLED = "disabled"


class DriftIgnoreRule(ApiModel):
    paths: list[str]
    target: dict[str, str] | None = None


class DriftDetection(ApiModel):
    mode: DriftDetectionMode | None = None
    ignore: list[DriftIgnoreRule] | None = None


class ValuesKind(StrEnum):
    SECRET = "Secret"
    CONFIG_MAP = "ConfigMap"


class ValuesReference(ApiModel):
    """Values read on the downstream cluster by Flux, never by the manager."""

    kind: ValuesKind
    name: str = Field(min_length=1)
    valuesKey: str | None = None
    targetPath: str | None = None
    optional: bool | None = None


class HelmOptions(ApiModel):
    repo: str | None = None
    chart: str | None = None
    version: str | None = None
    releaseName: str | None = None
    values: FreeForm | None = None
    valuesFrom: list[ValuesReference] | None = None
    secretRef: LocalObjectReference | None = None
    # oci:// only: Flux's OCIRepository talks to the registry over plain HTTP.
    insecure: bool | None = None
    timeout: Duration | None = None
    pollInterval: Duration | None = None
    disableTemplating: bool | None = None
    interval: Duration | None = None
    install: InstallOptions | None = None
    upgrade: UpgradeOptions | None = None
    rollback: RollbackOptions | None = None
    uninstall: UninstallOptions | None = None
    test: TestOptions | None = None
    maxHistory: int | None = Field(default=None, ge=0)
    driftDetection: DriftDetection | None = None
