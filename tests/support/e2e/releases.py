"""Helm's own record of a release on a test cluster: the `sh.helm.release.v1.<name>.v<N>`
Secrets in the storage namespace (base64 of gzip of JSON, inside the Secret's base64), which hold
the values Helm was given and the chart version, whoever installed it."""

from __future__ import annotations

import base64
import gzip
import json
from dataclasses import dataclass
from typing import Any

from tests.support.e2e.controlplane import TestCluster

RELEASE_SECRET_TYPE = "helm.sh/release.v1"


@dataclass(frozen=True)
class HelmRecord:
    name: str
    revision: int
    status: str
    chart_version: str
    values: dict[str, Any]

    @property
    def version(self) -> str:
        """The chart version without build metadata: for an OCIRepository Flux records
        `1.1.0+<12 hex digits of the artifact digest>`."""
        return self.chart_version.split("+", 1)[0]


def helm_records(cluster: TestCluster, release: str, namespace: str) -> list[HelmRecord]:
    """Every revision Helm recorded of `release`, oldest first."""
    secrets = cluster.list(
        "secrets", namespace, f"--field-selector=type={RELEASE_SECRET_TYPE}",
        f"--selector=owner=helm,name={release}",
    )  # fmt: skip
    records = [_decode(secret) for secret in secrets]
    return sorted(records, key=lambda record: record.revision)


def latest_record(cluster: TestCluster, release: str, namespace: str) -> HelmRecord | None:
    records = helm_records(cluster, release, namespace)
    return records[-1] if records else None


def _decode(secret: dict[str, Any]) -> HelmRecord:
    payload = base64.b64decode(base64.b64decode(secret["data"]["release"]))
    if payload[:2] == b"\x1f\x8b":
        payload = gzip.decompress(payload)
    release = json.loads(payload)
    return HelmRecord(
        name=release["name"],
        revision=int(release["version"]),
        status=release["info"]["status"],
        chart_version=release["chart"]["metadata"]["version"],
        values=release.get("config") or {},
    )
