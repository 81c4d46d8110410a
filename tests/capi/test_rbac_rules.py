"""The manager rules only the Cluster API importer needs (reading CAPI Clusters, stripping Flux
finalizers in a forced cleanup) are needed: an import forced out after its cleanup bound runs
without one request refused under MANAGER_RULES, and without either rule the importer is refused.
"""

from __future__ import annotations

import pytest

from bundler.api.resources import (
    BUNDLE_DEPLOYMENT,
    CAPI_CLUSTER,
    CLUSTER,
    FLUX_KINDS,
    HELM_RELEASE,
    NAMESPACE,
)
from bundler.capi.start import CapiImportOptions
from bundler.core.rbac import BOOTSTRAP_RULES, MANAGER_RULES, READ, rule
from bundler.store.errors import Forbidden
from tests.support.capi.capi_objects import WS
from tests.support.capi.cleanup import deleting, deployed_import
from tests.support.capi.fleet import MakeFleet
from tests.support.identities import MANAGER_USER
from tests.support.manager.rbac_rules import without

BOUND = 60.0
READ_CAPI = rule(READ, [CAPI_CLUSTER])
STRIP_FLUX = rule(("list", "patch"), FLUX_KINDS)
CAPI_RULES = [
    r
    for r in MANAGER_RULES
    if {CAPI_CLUSTER.group, HELM_RELEASE.group} & set(r.api_groups) and r not in BOOTSTRAP_RULES
]


def test_a_forced_cleanup_runs_with_exactly_the_manager_rules(make_fleet: MakeFleet) -> None:
    fleet = make_fleet(CapiImportOptions(cleanup_timeout=BOUND))
    namespace = deployed_import(fleet)
    fleet.store.delete(CAPI_CLUSTER, "eu-1", WS)
    deleting(fleet)
    fleet.clock.advance(BOUND + 1.0)
    fleet.wait_gone(CLUSTER, "eu-1")
    fleet.wait_gone(BUNDLE_DEPLOYMENT, "calico", namespace)
    fleet.wait_gone(HELM_RELEASE, "calico", namespace)
    fleet.wait_gone(NAMESPACE, namespace, None)
    assert fleet.server.denials() == []


def test_the_capi_rules_are_reading_clusters_and_stripping_flux_finalizers() -> None:
    assert CAPI_RULES == [READ_CAPI, STRIP_FLUX]


def test_without_reading_capi_clusters_the_importer_is_refused(make_fleet: MakeFleet) -> None:
    with pytest.raises(Forbidden, match=MANAGER_USER):
        make_fleet(rules=without(READ_CAPI))


def test_without_the_flux_rule_a_forced_cleanup_is_refused(make_fleet: MakeFleet) -> None:
    fleet = make_fleet(CapiImportOptions(cleanup_timeout=BOUND), rules=without(STRIP_FLUX))
    deployed_import(fleet)
    fleet.store.delete(CAPI_CLUSTER, "eu-1", WS)
    deleting(fleet)
    assert fleet.server.denials() == []
    fleet.clock.advance(BOUND + 1.0)
    fleet.eventually(lambda: fleet.server.denials(MANAGER_USER), "a refused request")
