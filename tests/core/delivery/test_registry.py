"""The delivery seam (bundler.core.delivery.registry): which delivery a BundleDeployment's options
take, and that each delivery's kinds, apply order and RBAC agree with what the agent watches."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.agent.caches import FLUX_KINDS, OWNED_KINDS, WORKLOADS
from bundler.api.resources import (
    GIT_REPOSITORY,
    HELM_RELEASE,
    HELM_REPOSITORY,
    KUSTOMIZATION,
    OCI_REPOSITORY,
    SECRET,
    Resource,
)
from bundler.core.delivery import Delivery, ReportReason
from bundler.core.delivery.helm import HELM
from bundler.core.delivery.kustomize import KUSTOMIZE
from bundler.core.delivery.registry import DELIVERIES, delivery_for, watched_kinds
from bundler.core.rbac import (
    AGENT_DOWNSTREAM_RULES,
    READ,
    REMOTE_AGENT_RULES,
    WRITE,
    PolicyRule,
    delivery_rules,
)
from tests.support.core.flux.objects import OCI_REPO, PULL, make_bd, make_kustomize_bd

GIT = {"git": {"url": "https://git.example/podinfo.git", "ref": {"branch": "main"}}}


def grants(rules: tuple[PolicyRule, ...], res: Resource, verb: str) -> bool:
    return any(
        verb in r.verbs and res.group in r.api_groups and res.plural in r.resources for r in rules
    )


@pytest.mark.parametrize(
    ("helm", "delivery"),
    [
        ({}, HELM),
        ({"repo": OCI_REPO}, HELM),
        ({"secretRef": {"name": "registry"}}, HELM),
    ],
    ids=["http-repository", "oci-repository", "with-credentials"],
)
def test_delivery_for_picks_the_delivery_of_the_options(
    helm: dict[str, Any], delivery: Delivery
) -> None:
    assert delivery_for(make_bd(**helm).spec.options) is delivery


def test_kustomize_options_take_the_kustomize_delivery() -> None:
    assert delivery_for(make_kustomize_bd().spec.options) is KUSTOMIZE


@pytest.mark.parametrize(
    ("delivery", "sources", "workload"),
    [
        (HELM, (HELM_REPOSITORY, OCI_REPOSITORY), HELM_RELEASE),
        (KUSTOMIZE, (OCI_REPOSITORY, GIT_REPOSITORY), KUSTOMIZATION),
    ],
    ids=lambda v: v.name if isinstance(v, Delivery) else None,
)
def test_a_delivery_writes_its_sources_before_its_workload(
    delivery: Delivery, sources: tuple[Resource, ...], workload: Resource
) -> None:
    assert delivery.kinds == (*sources, workload)


@pytest.mark.parametrize(
    ("helm", "kinds"),
    [
        ({}, [HELM_REPOSITORY, HELM_RELEASE]),
        ({"repo": OCI_REPO}, [OCI_REPOSITORY, HELM_RELEASE]),
        ({"kustomize": {}}, [OCI_REPOSITORY, KUSTOMIZATION]),
        ({"kustomize": {"source": GIT}}, [GIT_REPOSITORY, KUSTOMIZATION]),
    ],
    ids=["http-repository", "oci-repository", "kustomize-oci", "kustomize-git"],
)
def test_built_objects_are_of_the_delivery_kinds_in_apply_order(
    helm: dict[str, Any], kinds: list[Resource]
) -> None:
    bd = make_bd(**helm) if "kustomize" not in helm else make_kustomize_bd(**helm["kustomize"])
    delivery = delivery_for(bd.spec.options)
    built = delivery.build(bd, PULL)
    assert [res for res, _ in built] == kinds
    assert [obj["kind"] for res, obj in built] == [res.kind for res in kinds]
    assert built[-1][1]["metadata"]["name"] == delivery.workload_name(bd)


def test_the_agent_watches_every_delivery_kind_sources_first() -> None:
    assert DELIVERIES
    assert watched_kinds(DELIVERIES) == FLUX_KINDS
    assert (SECRET, *FLUX_KINDS) == OWNED_KINDS
    assert tuple(d.workload for d in DELIVERIES) == WORKLOADS
    for delivery in DELIVERIES:
        order = [OWNED_KINDS.index(res) for res in delivery.kinds]
        assert order == sorted(order)


@pytest.mark.parametrize("delivery", DELIVERIES, ids=lambda d: d.name)
def test_the_agent_rbac_grants_what_it_does_with_a_delivery(delivery: Delivery) -> None:
    rules = delivery_rules(delivery)
    assert set(rules) <= set(AGENT_DOWNSTREAM_RULES)
    for rules_of_mode in (AGENT_DOWNSTREAM_RULES, REMOTE_AGENT_RULES):
        for res in delivery.kinds:
            assert all(grants(rules_of_mode, res, verb) for verb in (*READ, *WRITE))
        # a kept release's workload is suspended before its deletion
        assert grants(rules_of_mode, delivery.workload, "patch")


@pytest.mark.parametrize("delivery", DELIVERIES, ids=lambda d: d.name)
def test_an_absent_workload_is_not_deployed(delivery: Delivery) -> None:
    report = delivery.read(None)
    assert not report.ready and report.reason == ReportReason.NOT_DEPLOYED
