"""bundler.core.flux.requirements: the Flux a cluster needs, and the report when it has another."""

from __future__ import annotations

import pytest

from bundler.core.flux.requirements import MINIMUM_FLUX, FluxProblem, flux_problem

HELM_RELEASES = "helmreleases.helm.toolkit.fluxcd.io"
OCI_REPOSITORIES = "ocirepositories.source.toolkit.fluxcd.io"
HELM_REPOSITORIES = "helmrepositories.source.toolkit.fluxcd.io"


@pytest.mark.parametrize(
    ("missing", "older", "problem", "mentioned"),
    [
        ((), {}, None, ()),
        (
            (HELM_RELEASES, OCI_REPOSITORIES, HELM_REPOSITORIES),
            {},
            FluxProblem.NOT_INSTALLED,
            (f"{HELM_RELEASES}/v2", f"{OCI_REPOSITORIES}/v1", MINIMUM_FLUX),
        ),
        (
            (OCI_REPOSITORIES,),
            {OCI_REPOSITORIES: "v1beta2"},
            FluxProblem.TOO_OLD,
            ("OCIRepository source.toolkit.fluxcd.io/v1beta2", "source-controller v1.6.0"),
        ),
        (
            (HELM_RELEASES, OCI_REPOSITORIES),
            {HELM_RELEASES: "v2beta1"},
            FluxProblem.TOO_OLD,
            ("HelmRelease helm.toolkit.fluxcd.io/v2beta1", f"upgrade Flux to {MINIMUM_FLUX}"),
        ),
        (("unrelated.example.com",), {}, None, ()),
    ],
    ids=["all-served", "not-installed", "oci-repository-too-old", "helm-release-too-old", "other"],
)
def test_flux_problem(
    missing: tuple[str, ...],
    older: dict[str, str],
    problem: FluxProblem | None,
    mentioned: tuple[str, ...],
) -> None:
    report = flux_problem(missing, older)
    assert (report.problem if report else None) == problem
    for text in mentioned:
        assert report is not None and text in report.message
