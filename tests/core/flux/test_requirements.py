"""bundler.core.flux.requirements: the Flux a cluster needs, and the report when it has another."""

from __future__ import annotations

import pytest

from bundler.core.flux.requirements import (
    FIELD_REQUIREMENTS,
    MINIMUM_FLUX,
    FluxProblem,
    flux_problem,
    unknown_field_hint,
)
from bundler.core.flux.source import SOURCE_API_VERSION
from tests.support.schemas import crd_schema

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


STRICT_CREATE = (
    'HelmRelease in version "v2" cannot be handled as a HelmRelease: strict decoding error: '
    "{fields}"
)


@pytest.mark.parametrize(
    ("unknown", "mentioned"),
    [
        pytest.param(
            ['unknown field "spec.install.strategy"'],
            [
                "HelmRelease spec.install.strategy is served from helm-controller v1.4.0",
                "(Flux v2.7.0)",
            ],
            id="one field of Flux 2.7",
        ),
        pytest.param(
            [
                'unknown field "spec.postRenderStrategy"',
                'unknown field "spec.valuesFrom[1].literal"',
            ],
            [
                "spec.postRenderStrategy is served from helm-controller v1.6.0 (Flux v2.9.0)",
                "spec.valuesFrom[].literal is served from helm-controller v1.6.0",
            ],
            id="two fields, a list item's among them",
        ),
        pytest.param(
            ['unknown field "spec.verify.trustedRootSecretRef"'],
            ["OCIRepository spec.verify.trustedRootSecretRef", "source-controller v1.9.0"],
            id="a source's field",
        ),
    ],
)
def test_unknown_fields_of_newer_flux_say_which_flux(
    unknown: list[str], mentioned: list[str]
) -> None:
    hint = unknown_field_hint(STRICT_CREATE.format(fields=", ".join(unknown)))
    assert hint is not None and "upgrade Flux" in hint
    for text in mentioned:
        assert text in hint


@pytest.mark.parametrize(
    "message",
    [
        STRICT_CREATE.format(fields='unknown field "spec.bogus"'),
        'HelmRelease.helm.toolkit.fluxcd.io "app" is invalid: spec.interval: Invalid value',
    ],
    ids=["a field no Flux has", "another refusal"],
)
def test_other_refusals_get_no_hint(message: str) -> None:
    assert unknown_field_hint(message) is None


API_VERSIONS = {"HelmRelease": "helm.toolkit.fluxcd.io/v2", "OCIRepository": SOURCE_API_VERSION}


def test_every_required_field_is_in_the_flux_crds_bundler_is_tested_with() -> None:
    for requirement in FIELD_REQUIREMENTS:
        schema = crd_schema(API_VERSIONS[requirement.kind], requirement.kind)
        for part in requirement.path.split("."):
            if part.endswith("[]"):
                schema = schema["properties"][part[:-2]]["items"]
            else:
                schema = schema["properties"][part]
        assert schema, requirement
