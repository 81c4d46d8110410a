"""Scenario 5: a cluster handed from pull mode to remote mode and back, its release never
uninstalled.

While the mode changes, a watcher looks at the release's Helm records downstream several times a
second: they never disappear, and the revisions only ever continue (an uninstall and install
would start again at 1).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.support.e2e.processes import wait_until
from tests.support.e2e.releases import helm_records
from tests.support.e2e.tenancy import Tenancy

PATIENCE = 240.0
HELM_RELEASES = "helmreleases.helm.toolkit.fluxcd.io"
LABELS = {"env": "e2e"}


@contextmanager
def watching_records(tenancy: Tenancy, cluster: str) -> Iterator[list[list[int]]]:
    """Revisions of the release seen by a background watcher, one list per look."""
    seen: list[list[int]] = []
    stop = threading.Event()
    downstream = tenancy.env.downstream[cluster]

    def watch() -> None:
        while not stop.wait(0.25):
            records = helm_records(downstream, "app", tenancy.release_namespace)
            seen.append([record.revision for record in records])

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join(timeout=30)


def _ready_in(tenancy: Tenancy, namespace: str, cluster: str) -> bool:
    found = (tenancy.env.management if namespace.startswith("cluster-") else
             tenancy.env.downstream[cluster]).get(HELM_RELEASES, "app", namespace)  # fmt: skip
    conditions = ((found or {}).get("status") or {}).get("conditions") or []
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
    return ready and tenancy.ready_clusters("app") == "1/1"


@pytest.mark.timeout(900)
def test_handover_between_modes_keeps_the_release(tenancy: Tenancy) -> None:
    tenancy.publish("1.0.0")
    tenancy.register("edge-1", LABELS)
    tenancy.start_manager()
    tenancy.start_remote_agent()
    pull_agent = tenancy.start_pull_agent("edge-1", heartbeat=3)
    tenancy.apply(tenancy.app_bundle("app", {"version": "1.0.0", "values": {"n": 1}}))
    pull_namespace, remote_namespace = tenancy.agent_namespace, tenancy.cluster_namespace("edge-1")
    edge = tenancy.env.downstream["edge-1"]

    def eventually(condition: object, what: str) -> None:
        wait_until(condition, what, timeout=PATIENCE, supervisor=tenancy.env.supervisor)  # type: ignore[arg-type]

    eventually(lambda: _ready_in(tenancy, pull_namespace, "edge-1"), "the pull agent's release")

    with watching_records(tenancy, "edge-1") as seen:
        tenancy.register("edge-1", LABELS, remote=True)
        eventually(
            lambda: (
                _ready_in(tenancy, remote_namespace, "edge-1")
                and edge.get(HELM_RELEASES, "app", pull_namespace) is None
            ),
            "Flux on the management cluster to take the release over",
        )
        # The pull agent has let go and its identity is gone: uninstalled, as an operator would.
        tenancy.stop(pull_agent)

        tenancy.register("edge-1", LABELS)
        tenancy.start_pull_agent("edge-1", heartbeat=3)
        eventually(
            lambda: (
                _ready_in(tenancy, pull_namespace, "edge-1")
                and tenancy.management.get(HELM_RELEASES, "app", remote_namespace) is None
            ),
            "the pull agent to take the release back",
        )

    assert seen
    assert all(looked for looked in seen), "the release's records disappeared during a handover"
    revisions = [record.revision for record in helm_records(edge, "app", tenancy.release_namespace)]
    assert revisions == list(range(1, len(revisions) + 1)), revisions
    assert len(revisions) >= 2, "each adoption is an upgrade of the installed release"
    assert all(looked[0] == 1 or looked[0] <= revisions[-1] for looked in seen)
