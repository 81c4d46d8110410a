"""The dashboard's actions: the merge patch each one writes, and the requests it refuses."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.resources import BUNDLE, CLUSTER
from bundler.errors import InvalidInputError
from bundler.store.memory import MemoryStore
from bundler.ui.actions import Action, ActionRequest, action_patch, perform
from tests.support.builders import WS, bundle


@pytest.mark.parametrize(
    ("action", "patch"),
    [
        (Action.PAUSE, {"spec": {"paused": True}}),
        (Action.RESUME, {"spec": {"paused": False}}),
        (
            Action.RESUME_ROLLOUT,
            {"metadata": {"annotations": {"bundler.dev/resume-rollout": "3"}}},
        ),
        (
            Action.ALLOW_DELETION,
            {"metadata": {"annotations": {"bundler.dev/allow-deletion": "3"}}},
        ),
    ],
    ids=lambda v: v.value if isinstance(v, Action) else "",
)
def test_each_action_is_the_patch_a_user_would_write(action: Action, patch: dict[str, Any]) -> None:
    assert action_patch(action, 3) == patch


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ([], None, "must be a JSON object"),
        ({"action": "pause", "kind": "Bundle", "namespace": WS}, "name", "non-empty"),
        ({"action": "delete", "kind": "Bundle", "namespace": WS, "name": "a"}, "action", "unknown"),
        (
            {"action": "resume-rollout", "kind": "Cluster", "namespace": WS, "name": "a"},
            "kind",
            "applies to Bundle",
        ),
        ({"action": "pause", "kind": "Secret", "namespace": WS, "name": "a"}, "kind", "Secret"),
    ],
    ids=["not-an-object", "no-name", "unknown-action", "wrong-kind", "another-kind"],
)
def test_bad_requests_name_the_field(body: Any, field: str | None, says: str) -> None:
    with pytest.raises(InvalidInputError, match=says) as raised:
        ActionRequest.parse(body)
    assert raised.value.field == field


def test_annotations_carry_the_generation_read_just_before() -> None:
    store = MemoryStore()
    created = store.create(BUNDLE, bundle().to_wire())
    generation = created["metadata"]["generation"]
    request = ActionRequest.parse(
        {"action": "allow-deletion", "kind": "Bundle", "namespace": WS, "name": "app"}
    )
    patched = perform(store, request)
    assert patched["metadata"]["annotations"] == {"bundler.dev/allow-deletion": str(generation)}


def test_pause_and_resume_a_cluster() -> None:
    store = MemoryStore()
    store.create(CLUSTER, {"metadata": {"name": "c1", "namespace": WS}, "spec": {}})
    for action, paused in (("pause", True), ("resume", False)):
        body = {"action": action, "kind": "Cluster", "namespace": WS, "name": "c1"}
        assert perform(store, ActionRequest.parse(body))["spec"]["paused"] is paused
