"""Leader election on a Lease: one leader at a time, takeover on expiry, a lost lease stops work."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from bundler.api.resources import LEASE, Resource
from bundler.runtime.clock import ManualClock
from bundler.runtime.host import Host
from bundler.runtime.key import Key
from bundler.runtime.leader import Attempt, LeaderElector, LeaseConfig, micro_time
from bundler.store.errors import Unavailable
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj
from tests.support.runtime.widgets import WAIT, WIDGET, widget

MICRO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def lease_config(identity: str) -> LeaseConfig:
    return LeaseConfig(name="bundler-manager", namespace="bundler-system", identity=identity)


class Candidate:
    """An elector plus the history of its callbacks."""

    def __init__(self, store: MemoryStore, clock: ManualClock, identity: str) -> None:
        self.history: list[str] = []
        self.elector = LeaderElector(
            store,
            lease_config(identity),
            clock,
            on_started_leading=lambda: self.history.append("started"),
            on_stopped_leading=lambda: self.history.append("stopped"),
        )


class UnreliableStore(MemoryStore):
    """A MemoryStore whose updates fail while `down` is set, as when the API server is away."""

    down = False

    def update(self, res: Resource, obj: Obj) -> Obj:
        if self.down:
            raise Unavailable("connection refused", obj=str(res))
        return super().update(res, obj)


def lease_spec(store: MemoryStore) -> dict[str, Any]:
    spec: dict[str, Any] = store.get(LEASE, "bundler-manager", "bundler-system")["spec"]
    return spec


def test_only_one_candidate_leads_and_the_other_takes_over_an_expired_lease(
    store: MemoryStore, clock: ManualClock
) -> None:
    a, b = Candidate(store, clock, "a"), Candidate(store, clock, "b")
    assert (a.elector.tick(), b.elector.tick()) == (Attempt.HELD, Attempt.HELD_ELSEWHERE)
    spec = lease_spec(store)
    assert (spec["holderIdentity"], spec["leaseDurationSeconds"], spec["leaseTransitions"]) == (
        "a",
        15,
        0,
    )
    assert MICRO_TIME.fullmatch(spec["renewTime"]) and spec["acquireTime"] == spec["renewTime"]

    clock.advance(10)
    assert (a.elector.tick(), b.elector.tick()) == (Attempt.HELD, Attempt.HELD_ELSEWHERE)
    assert lease_spec(store)["renewTime"] == micro_time(clock.now()), "the leader renewed"

    clock.advance(16)  # a stops renewing: its lease lapses
    assert b.elector.tick() is Attempt.HELD
    spec = lease_spec(store)
    assert (spec["holderIdentity"], spec["leaseTransitions"]) == ("b", 1)
    assert a.elector.tick() is Attempt.HELD_ELSEWHERE
    assert (a.history, b.history) == (["started", "stopped"], ["started"])
    assert (a.elector.is_leading, b.elector.is_leading) == (False, True)


def test_a_lease_within_its_duration_is_not_taken(store: MemoryStore, clock: ManualClock) -> None:
    a, b = Candidate(store, clock, "a"), Candidate(store, clock, "b")
    a.elector.tick()
    clock.advance(15)  # renewTime + 15s is now, not before now
    assert b.elector.tick() is Attempt.HELD_ELSEWHERE


def test_a_leader_that_cannot_renew_stops_at_the_renew_deadline(clock: ManualClock) -> None:
    store = UnreliableStore()
    a = Candidate(store, clock, "a")
    a.elector.tick()
    store.down = True
    for _ in range(4):
        clock.advance(2)
        assert a.elector.tick() is Attempt.FAILED
    assert a.history == ["started"], "8s without renewal: within the 10s deadline"
    clock.advance(2)
    a.elector.tick()
    assert a.history == ["started", "stopped"]


def test_released_lease_is_taken_at_once(store: MemoryStore, clock: ManualClock) -> None:
    a, b = Candidate(store, clock, "a"), Candidate(store, clock, "b")
    a.elector.tick()
    a.elector.release()
    assert (a.history, lease_spec(store)["holderIdentity"]) == (["started", "stopped"], "")
    assert b.elector.tick() is Attempt.HELD


@pytest.mark.parametrize(
    "timings",
    [
        {"retry_period": 0},
        {"renew_deadline": 1.0, "retry_period": 2.0},
        {"lease_duration": 10, "renew_deadline": 10.0},
    ],
    ids=["zero-retry", "retry-beyond-deadline", "deadline-not-before-expiry"],
)
def test_lease_timings_must_nest(timings: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="retry_period"):
        LeaseConfig(name="l", namespace="ns", identity="a", **timings)


# -- hosts --------------------------------------------------------------------------------------

Reconciled = list[tuple[str, Key]]


@pytest.fixture
def start_host(
    store: MemoryStore, clock: ManualClock
) -> Iterator[Callable[[str, Reconciled], Host]]:
    """Started hosts electing on one Lease, each recording (identity, key) it reconciles."""
    hosts: list[Host] = []

    def start(identity: str, reconciled: Reconciled) -> Host:
        host = Host(store, clock=clock, leader_election=lease_config(identity), name=identity)
        host.add_controller(
            "widgets", lambda key: reconciled.append((identity, key)), primary=host.informer(WIDGET)
        )
        host.start()
        hosts.append(host)
        assert host.wait_idle(WAIT)
        return host

    yield start
    for host in hosts:
        host.stop(WAIT)


def steal_lease(store: MemoryStore, clock: ManualClock) -> None:
    lease = store.get(LEASE, "bundler-manager", "bundler-system")
    lease["spec"].update(holderIdentity="intruder", renewTime=micro_time(clock.now()))
    store.update(LEASE, lease)


def test_only_the_leading_host_reconciles_and_a_stopped_leader_hands_over(
    store: MemoryStore, clock: ManualClock, start_host: Callable[[str, Reconciled], Host]
) -> None:
    reconciled: Reconciled = []
    first, second = start_host("first", reconciled), start_host("second", reconciled)
    assert (first.is_leading, second.is_leading) == (True, False)
    store.create(WIDGET, widget("a"))
    assert first.wait_idle(WAIT) and second.wait_idle(WAIT)
    assert reconciled == [("first", Key("default", "a"))]

    first.stop(WAIT)
    clock.advance(2)
    assert second.wait_idle(WAIT) and second.is_leading
    assert reconciled[-1] == ("second", Key("default", "a")), "the new leader catches up"


def test_a_host_that_loses_its_lease_stops_reconciling_until_it_wins_again(
    store: MemoryStore, clock: ManualClock, start_host: Callable[[str, Reconciled], Host]
) -> None:
    reconciled: Reconciled = []
    host = start_host("only", reconciled)
    steal_lease(store, clock)
    clock.advance(2)
    assert host.wait_idle(WAIT) and not host.is_leading
    store.create(WIDGET, widget("a"))
    assert host.wait_idle(WAIT)
    assert reconciled == [], "a host without the lease does not reconcile"
    clock.advance(16)  # the intruder never renews
    assert host.wait_idle(WAIT) and host.is_leading
    assert reconciled == [("only", Key("default", "a"))]
