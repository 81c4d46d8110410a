"""bundler.agent.flux_check: telling an older Flux from none, by what the cluster serves."""

from __future__ import annotations

import pytest

from bundler.agent.caches import FluxNotInstalledError
from bundler.agent.flux_check import flux_status, older_flux_versions
from bundler.api.resources import HELM_RELEASE, HELM_REPOSITORY, Resource
from bundler.core.flux.requirements import FluxProblem, FluxReport
from bundler.store.memory import MemoryStore

OCI_V1BETA2 = Resource("source.toolkit.fluxcd.io", "v1beta2", "OCIRepository", "ocirepositories")
HELM_RELEASE_V2BETA1 = Resource("helm.toolkit.fluxcd.io", "v2beta1", "HelmRelease", "helmreleases")
MISSING = FluxNotInstalledError(
    ["ocirepositories.source.toolkit.fluxcd.io", "helmreleases.helm.toolkit.fluxcd.io"]
)


@pytest.mark.parametrize(
    ("served", "found"),
    [
        ((), {}),
        ((OCI_V1BETA2,), {"ocirepositories.source.toolkit.fluxcd.io": "v1beta2"}),
        (
            (OCI_V1BETA2, HELM_RELEASE_V2BETA1, HELM_REPOSITORY),
            {
                "ocirepositories.source.toolkit.fluxcd.io": "v1beta2",
                "helmreleases.helm.toolkit.fluxcd.io": "v2beta1",
            },
        ),
        ((HELM_RELEASE, HELM_REPOSITORY), {}),
    ],
    ids=["nothing-served", "old-oci-repository", "old-flux", "only-current-versions"],
)
def test_older_versions_are_found_where_served(
    served: tuple[Resource, ...], found: dict[str, str]
) -> None:
    store = MemoryStore(served=served)
    assert older_flux_versions(store, "bundler-system", MISSING) == found


@pytest.mark.parametrize(
    ("report", "status"),
    [
        (None, {"supported": True, "reason": None, "message": None}),
        (
            FluxReport(FluxProblem.TOO_OLD, "upgrade"),
            {"supported": False, "reason": "FluxTooOld", "message": "upgrade"},
        ),
    ],
    ids=["supported", "too-old"],
)
def test_flux_status_is_what_the_heartbeat_writes(
    report: FluxReport | None, status: dict[str, object]
) -> None:
    assert flux_status(report) == status
