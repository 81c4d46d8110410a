"""The agent checks the Flux it deploys with: a cluster without Flux, then with a Flux too old
for bundler (OCIRepository served only as v1beta2, as before source-controller v1.6), then with a
current one; the Cluster's FluxSupported condition says which, and what to do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.e2e.processes import wait_until
from tests.support.e2e.tenancy import Tenancy

PATIENCE = 120.0
OCI_REPOSITORIES = "ocirepositories.source.toolkit.fluxcd.io"


def _flux_condition(tenancy: Tenancy) -> dict[str, Any] | None:
    found = tenancy.management.get("clusters.bundler.dev", "bare", tenancy.workspace) or {}
    conditions = (found.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "FluxSupported"), None)


def _reason_becomes(tenancy: Tenancy, reason: str) -> dict[str, Any]:
    found = wait_until(
        lambda: (c := _flux_condition(tenancy)) is not None and c["reason"] == reason and c,
        f"FluxSupported with reason {reason}",
        timeout=PATIENCE,
        supervisor=tenancy.env.supervisor,
        detail=lambda: f"condition now {_flux_condition(tenancy)}",
    )
    assert isinstance(found, dict)
    return found


def _served_only_as_v1beta2(crd: Path, out: Path) -> Path:
    """The OCIRepository CRD as an older source-controller had it: v1beta2 only."""
    document = yaml.safe_load(crd.read_text())
    (version,) = document["spec"]["versions"]
    version["name"] = "v1beta2"
    out.write_text(yaml.safe_dump(document))
    return out


@pytest.mark.timeout(600)
def test_the_cluster_says_whether_its_flux_will_do(tenancy: Tenancy) -> None:
    flux_crds = {path.name: path for path in tenancy.env.tools.flux_crds}
    oci_crd = next(
        path for name, path in flux_crds.items() if name.endswith("_ocirepositories.yaml")
    )
    with tenancy.env.bare_cluster(f"bare-{tenancy.workspace}"[:40]) as bare:
        tenancy.env.downstream["bare"] = bare
        try:
            tenancy.register("bare", {"env": "bare"})
            tenancy.start_manager()
            tenancy.start_pull_agent("bare", heartbeat=2)
            missing = _reason_becomes(tenancy, "FluxNotInstalled")
            assert missing["status"] == "False"
            assert "helmreleases.helm.toolkit.fluxcd.io/v2" in missing["message"]

            old = _served_only_as_v1beta2(oci_crd, tenancy.workdir / "old-ocirepositories.yaml")
            bare.install_crds(*(p for p in flux_crds.values() if p != oci_crd), old)
            too_old = _reason_becomes(tenancy, "FluxTooOld")
            assert "OCIRepository source.toolkit.fluxcd.io/v1beta2" in too_old["message"]

            bare.kubectl("delete", "crd", OCI_REPOSITORIES)
            bare.install_crds(oci_crd)
            assert _reason_becomes(tenancy, "Supported")["status"] == "True"
        finally:
            del tenancy.env.downstream["bare"]
