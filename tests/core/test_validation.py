"""Bundle checks beyond the schema: target names, release names."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.core.naming import is_helm_release_name
from bundler.core.validation import validate_bundle
from bundler.errors import InvalidInputError
from tests.support.builders import bundle


def test_duplicate_target_names_in_one_bundle_are_rejected() -> None:
    targets = [
        {"name": "prod", "clusterName": "a"},
        {"clusterName": "b"},
        {"name": "prod", "clusterName": "c"},
    ]
    with pytest.raises(InvalidInputError) as err:
        validate_bundle(bundle(targets))
    assert err.value.field == "spec.targets[2].name"
    assert err.value.message == "target name 'prod' is already used by spec.targets[0]"


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("web", True),
        ("web.v2", True),  # dots: Helm allows them, as a Bundle name does
        ("a" * 53, True),
        ("a" * 54, False),
        ("Web", False),
        ("web_v2", False),
        ("-web", False),
        ("web.", False),
    ],
    ids=[
        "plain",
        "dots",
        "53-chars",
        "54-chars",
        "uppercase",
        "underscore",
        "leading-dash",
        "dot-end",
    ],
)
def test_a_release_name_follows_helms_rule_wherever_it_comes_from(name: str, valid: bool) -> None:
    assert is_helm_release_name(name) is valid
    explicit = bundle([{"clusterName": "a"}], helm={"releaseName": name})
    if valid:
        validate_bundle(explicit)
        return
    with pytest.raises(InvalidInputError) as err:
        validate_bundle(explicit)
    assert err.value.field == "spec.helm.releaseName"
    assert "valid Helm release name (lowercase letters, digits, '-' and '.'" in err.value.message


def test_a_bundle_name_with_dots_is_its_release_name_as_releasename_would_be() -> None:
    validate_bundle(bundle([{"clusterName": "a"}], name="web.v2"))
    validate_bundle(bundle([{"clusterName": "a"}], name="other", helm={"releaseName": "web.v2"}))


OCI = {"repo": "oci://registry.example/charts"}
VERIFY = {"source": {"verify": {"provider": "cosign"}}}
RETRY_LATER = {"strategy": {"name": "RetryOnFailure", "retryInterval": "1m"}}
TEMPLATED_PATCH = "metadata:\n  labels:\n    region: ${ cluster.labels.region }\n"


def _patches(patch: str) -> dict[str, object]:
    return {"postRenderers": [{"kustomize": {"patches": [{"patch": patch}]}}]}


@pytest.mark.parametrize(
    ("helm", "targets", "field", "message"),
    [
        pytest.param(
            VERIFY,
            [],
            "spec.helm.source.verify",
            "is a field of an OCIRepository (oci://)",
            id="verify on an https repository",
        ),
        pytest.param(
            {**OCI, **VERIFY},
            [{"clusterName": "a", "helm": {"repo": "https://charts.example.com"}}],
            "spec.targets[0].helm.source.verify",
            "this chart is read through a HelmRepository",
            id="a target's repository makes the bundle's verify wrong",
        ),
        pytest.param(
            {"upgrade": RETRY_LATER},
            [
                {
                    "clusterName": "a",
                    "helm": {"upgrade": {"strategy": {"name": "RemediateOnFailure"}}},
                }
            ],
            "spec.targets[0].helm.upgrade.strategy.retryInterval",
            "applies to strategy RetryOnFailure only",
            id="a target's strategy name with the bundle's retryInterval",
        ),
        pytest.param(
            {"install": {"remediation": {"strategy": "rollback"}}},
            [],
            "spec.helm.install.remediation.strategy",
            "upgrades only",
            id="install remediation strategy",
        ),
        pytest.param(
            _patches("metadata: {labels: {region: ${ cluster.labels.region }}}\n"),
            [],
            "spec.helm.postRenderers[0].kustomize.patches[0].patch",
            "in flow style ({...}, [...]) quote a template",
            id="a templated patch that is not YAML",
        ),
        pytest.param(
            {},
            [{"clusterName": "a", "helm": _patches("a: ${ x }\n---\nb: c\n")}],
            "spec.targets[0].helm.postRenderers[0].kustomize.patches[0].patch",
            "expected one document",
            id="a target's templated patch of two documents",
        ),
    ],
)
def test_flux_options_are_checked_as_each_target_merges_them(
    helm: dict[str, object], targets: list[dict[str, object]], field: str, message: str
) -> None:
    with pytest.raises(InvalidInputError) as err:
        validate_bundle(bundle(targets, helm=helm))
    assert err.value.field == field
    assert message in err.value.message
    assert err.value.obj == "Bundle fleet-default/app"


@pytest.mark.parametrize(
    "helm",
    [
        pytest.param({**OCI, **VERIFY, "install": RETRY_LATER}, id="oci verify, retry strategy"),
        pytest.param(_patches(TEMPLATED_PATCH), id="a templated patch that is YAML"),
        pytest.param(
            {**_patches("{not yaml: ${ x }"), "disableTemplating": True},
            id="templating off: the patch is passed as written",
        ),
        pytest.param(_patches("{not: yaml"), id="no template: the patch is passed as written"),
    ],
)
def test_valid_flux_options_pass(helm: dict[str, object]) -> None:
    validate_bundle(bundle([{"clusterName": "a"}], helm=helm))


PARTS = [{"name": "canary", "clusterName": "a"}, {"name": "rest", "clusterSelector": {}}]
# (id, spec fields, the field named, a piece of the message)
GATES: list[tuple[str, dict[str, Any], str, str]] = [
    ("bad-cron", {"schedule": {"windows": [{"cron": "0 0 * * MOON", "duration": "1h"}]}},
     "spec.schedule.windows[0].cron", "day of week field 'MOON' is not a number or a name"),
    ("bad-time-zone", {"schedule": {"timeZone": "Europe/Atlantis"}}, "spec.schedule.timeZone",
     "'Europe/Atlantis' is not a time zone"),
    ("unknown-partition", {"rolloutStrategy": {"partitions": PARTS,
                                               "approval": {"partitions": ["prod"]}}},
     "spec.rolloutStrategy.approval.partitions[0]",
     "no partition 'prod' in spec.rolloutStrategy.partitions (partitions: 'canary', 'rest')"),
    ("approval-without-partitions", {"rolloutStrategy": {"approval": {"partitions": ["prod"]}}},
     "spec.rolloutStrategy.approval.partitions[0]", "leave approval.partitions out"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "field", "message"), [c[1:] for c in GATES], ids=[c[0] for c in GATES]
)
def test_invalid_gates_name_the_field(spec: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(InvalidInputError) as err:
        validate_bundle(bundle([{"clusterName": "a"}], **spec))
    assert err.value.field == field
    assert message in err.value.message


def test_a_bad_health_check_expression_is_the_bundles_invalid_spec() -> None:
    check = {"kind": "Deployment", "name": "web", "current": "status.readyReplicas >"}
    with pytest.raises(InvalidInputError) as err:
        validate_bundle(bundle([{"clusterName": "a", "healthChecks": [check]}]))
    assert err.value.field == "spec.targets[0].healthChecks[0].current"
    assert "is not a CEL expression" in err.value.message
