"""The manager's own BundleDeployment writes: awaited until the informer shows them again."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bundler.manager.memo.own_writes import OwnWrites
from bundler.runtime.key import Key

A = Key("cluster-ws-a", "app")
B = Key("cluster-ws-b", "app")
SPEC = {"deploymentID": "d-1"}


def expecting(*keys: Key, bundle: str = "ws/app") -> OwnWrites:
    writes = OwnWrites()
    for key in keys:
        writes.expect(key, SPEC, {}, bundle)
    return writes


@pytest.mark.parametrize(
    ("settle", "awaiting"),
    [
        (lambda w: None, True),
        (lambda w: w.shown(A), True),
        (lambda w: (w.shown(A), w.shown(B)), False),
        (lambda w: (w.forget(A), w.forget(B)), False),
        (lambda w: w.stop_awaiting(), False),
        (lambda w: (w.expect(A, SPEC, {}, "ws/app"), w.shown(A), w.shown(B)), False),
    ],
    ids=[
        "nothing-shown",
        "one-of-two-shown",
        "both-shown",
        "both-deleted",
        "resync",
        "written-twice-shown-once",
    ],
)
def test_writes_are_awaited_until_shown(
    settle: Callable[[OwnWrites], object], awaiting: bool
) -> None:
    writes = expecting(A, B)
    settle(writes)
    assert (writes.awaiting("ws/app"), writes.awaiting_in("ws")) == (awaiting, awaiting)


def test_awaiting_is_per_bundle_and_workspace() -> None:
    writes = expecting(A, bundle="ws/app")
    assert (writes.awaiting("ws/other"), writes.awaiting_in("other-ws")) == (False, False)


def _shown(spec: dict[str, str], labels: dict[str, str]) -> dict[str, object]:
    return {"metadata": {"namespace": A.namespace, "name": A.name, "labels": labels}, "spec": spec}


LABELS = {"bundler.dev/bundle-name": "app"}


@pytest.mark.parametrize(
    ("events", "echoes"),
    [
        pytest.param([_shown(SPEC, LABELS)], [True], id="what was written"),
        pytest.param([_shown({"deploymentID": "d-2"}, LABELS)], [False], id="another spec"),
        pytest.param([_shown(SPEC, {})], [False], id="without the labels written"),
        pytest.param(
            [_shown(SPEC, LABELS), _shown(SPEC, LABELS)], [True, False], id="recognised once"
        ),
        pytest.param(
            [_shown({"deploymentID": "d-2"}, LABELS), _shown(SPEC, LABELS)],
            [False, True],
            id="an edit, then the write",
        ),
    ],
)
def test_the_echo_of_a_write_is_recognised_once(
    events: list[dict[str, object]], echoes: list[bool]
) -> None:
    writes = OwnWrites()
    writes.expect(A, dict(SPEC), LABELS, "ws/app")
    assert [writes.is_echo(event) for event in events] == echoes


def test_a_forgotten_write_has_no_echo() -> None:
    writes = expecting(A)
    writes.forget(A)
    assert not writes.is_echo(_shown(SPEC, {}))
