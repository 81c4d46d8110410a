"""dependsOn by name or label selector, with accepted states (Fleet's form), resolved and
checked."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.bundledeployment import BundleDeployment
from bundler.api.dependencies import DependsOn
from bundler.api.summary import DeploymentState as S
from bundler.core.dependencies import (
    accepts,
    resolve_dependencies,
    unmatched_selector,
    waits_in_flux,
)
from bundler.core.validation import validate_bundle
from bundler.errors import InvalidInputError
from tests.support.builders import bundle, deployment

WORKSPACE = {
    "app": {"tier": "web"},
    "cert-manager": {"tier": "infra"},
    "ingress": {"tier": "infra", "edge": "true"},
    "db": {"tier": "data"},
}
INFRA = {"matchLabels": {"tier": "infra"}}

# (dependsOn as written, (name, acceptedStates) resolved)
RESOLVE_CASES: list[tuple[str, list[dict[str, Any]], list[tuple[str, list[S] | None]]]] = [
    ("by-name", [{"name": "db"}], [("db", None)]),
    ("by-selector-sorted", [{"selector": INFRA}], [("cert-manager", None), ("ingress", None)]),
    (
        "accepted-states-carried",
        [{"selector": INFRA, "acceptedStates": ["Ready", "Modified"]}],
        [("cert-manager", [S.READY, S.MODIFIED]), ("ingress", [S.READY, S.MODIFIED])],
    ),
    ("never-itself", [{"selector": {}}], [("cert-manager", None), ("db", None), ("ingress", None)]),
    (
        "a-bundle-named-twice-keeps-its-first-entry",
        [{"name": "ingress", "acceptedStates": ["NotReady"]}, {"selector": INFRA}],
        [("ingress", [S.NOT_READY]), ("cert-manager", None)],
    ),
    ("selecting-nothing", [{"selector": {"matchLabels": {"tier": "none"}}}], []),
]


@pytest.mark.parametrize(
    ("depends_on", "expected"), [c[1:] for c in RESOLVE_CASES], ids=[c[0] for c in RESOLVE_CASES]
)
def test_selectors_are_resolved_into_names(
    depends_on: list[dict[str, Any]], expected: list[tuple[str, list[S] | None]]
) -> None:
    resolved = resolve_dependencies(bundle(dependsOn=depends_on), WORKSPACE)
    assert [(d.name, d.acceptedStates) for d in resolved] == expected
    assert all(d.selector is None for d in resolved)


def test_a_selector_picking_nothing_is_told() -> None:
    lonely = bundle(dependsOn=[{"selector": {"matchLabels": {"tier": "none"}}}, {"name": "db"}])
    assert unmatched_selector(lonely, 0, WORKSPACE) == (
        "spec.dependsOn[0].selector: no other Bundle of fleet-default has labels 'tier=none', so "
        "it waits for nothing"
    )
    assert unmatched_selector(lonely, 1, WORKSPACE) is None


READY = deployment()
# (acceptedStates, the dependency's BundleDeployment, accepted)
ACCEPT_CASES: list[tuple[str, list[S] | None, BundleDeployment | None, bool]] = [
    ("ready-by-default", None, READY, True),
    ("staged-change-is-still-ready-by-default", None, deployment(staged="v3"), True),
    ("drift-is-still-ready-by-default", None, deployment(non_modified=False), True),
    ("not-ready-waits-by-default", None, deployment(ready=False), False),
    ("missing-waits", [S.NOT_READY], None, False),
    ("not-ready-accepted", [S.NOT_READY, S.READY], deployment(ready=False), True),
    ("modified-accepted", [S.READY, S.MODIFIED], deployment(non_modified=False), True),
    ("modified-not-accepted", [S.READY], deployment(non_modified=False), False),
    ("wait-applied-accepted", [S.WAIT_APPLIED], deployment(applied="v1"), True),
]


@pytest.mark.parametrize(
    ("states", "bd", "accepted"), [c[1:] for c in ACCEPT_CASES], ids=[c[0] for c in ACCEPT_CASES]
)
def test_the_dependency_state_must_be_accepted(
    states: list[S] | None, bd: BundleDeployment | None, accepted: bool
) -> None:
    assert accepts(DependsOn(name="db", acceptedStates=states), bd) is accepted


@pytest.mark.parametrize(
    ("states", "in_flux"),
    [(None, True), ([S.READY, S.MODIFIED], True), ([S.READY, S.NOT_READY], False)],
    ids=["default", "ready-or-modified", "not-ready-accepted"],
)
def test_flux_waits_only_for_dependencies_that_must_be_ready(
    states: list[S] | None, in_flux: bool
) -> None:
    assert waits_in_flux(DependsOn(name="db", acceptedStates=states)) is in_flux


@pytest.mark.parametrize(
    ("depends_on", "field", "message"),
    [
        ([{}], "spec.dependsOn[0]", "give either name or selector"),
        ([{"name": "db", "selector": INFRA}], "spec.dependsOn[0]", "give either name or selector"),
        ([{"name": "app"}], "spec.dependsOn[0].name", "cannot depend on itself"),
        (
            [{"name": "db", "acceptedStates": ["Ready", "Ready"]}],
            "spec.dependsOn[0].acceptedStates",
            "twice",
        ),
        (
            [{"selector": {"matchLabels": {"bad key!": "x"}}}],
            "spec.dependsOn[0].selector",
            "",
        ),
    ],
    ids=["neither", "both", "itself", "state-twice", "bad-selector"],
)
def test_invalid_depends_on_names_the_field(
    depends_on: list[dict[str, Any]], field: str, message: str
) -> None:
    with pytest.raises(InvalidInputError) as raised:
        validate_bundle(bundle(dependsOn=depends_on))
    assert (raised.value.field or "").startswith(field) and message in raised.value.message
