"""Bundle checks beyond the schema: target names, release names."""

from __future__ import annotations

import pytest

from bundler.core.naming import is_helm_release_name
from bundler.core.validation import validate_bundle
from bundler.errors import InvalidInputError
from tests.builders import bundle


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
