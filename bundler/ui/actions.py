"""The dashboard's actions: each one merge patch, sent with the user's own credentials.

They write exactly what a user would write with kubectl, the fields and annotations the manager
already reads: `spec.paused` of a Bundle or a Cluster; `bundler.dev/resume-rollout:
"<generation>"` on a Bundle whose rollout halted (bundler.core.rollout_failures);
`bundler.dev/allow-deletion: "<generation>"` on a Bundle whose deletion is held
(bundler.core.deletion_guard). The generation is read just before, with the same credentials.
Whatever the API server refuses (RBAC's 403, a Bundle gone) is raised with its own message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bundler.api.resources import BUNDLE, CLUSTER, Resource
from bundler.core.deletion_guard import ALLOW_DELETION
from bundler.core.rollout_failures import RESUME
from bundler.errors import InvalidInputError
from bundler.store.protocol import Obj, Store


class Action(StrEnum):
    PAUSE = "pause"
    RESUME = "resume"
    RESUME_ROLLOUT = "resume-rollout"
    ALLOW_DELETION = "allow-deletion"


# The kinds each action applies to.
_KINDS: dict[Action, tuple[Resource, ...]] = {
    Action.PAUSE: (BUNDLE, CLUSTER),
    Action.RESUME: (BUNDLE, CLUSTER),
    Action.RESUME_ROLLOUT: (BUNDLE,),
    Action.ALLOW_DELETION: (BUNDLE,),
}
_RESOURCES = {res.kind: res for res in (BUNDLE, CLUSTER)}
_ANNOTATIONS = {Action.RESUME_ROLLOUT: RESUME, Action.ALLOW_DELETION: ALLOW_DELETION}


@dataclass(frozen=True)
class ActionRequest:
    action: Action
    res: Resource
    namespace: str
    name: str

    @classmethod
    def parse(cls, body: Any) -> ActionRequest:
        """From the page's JSON: {action, kind, namespace, name}; InvalidInputError naming the
        field that is wrong."""
        if not isinstance(body, Mapping):
            raise InvalidInputError("must be a JSON object", obj="action request")
        fields = {}
        for name in ("action", "kind", "namespace", "name"):
            value = body.get(name)
            if not isinstance(value, str) or not value:
                raise InvalidInputError(
                    "must be a non-empty string", obj="action request", field=name
                )
            fields[name] = value
        try:
            action = Action(fields["action"])
        except ValueError:
            known = ", ".join(a.value for a in Action)
            raise InvalidInputError(
                f"unknown action {fields['action']!r} (one of {known})",
                obj="action request",
                field="action",
            ) from None
        res = _RESOURCES.get(fields["kind"])
        if res is None or res not in _KINDS[action]:
            kinds = ", ".join(r.kind for r in _KINDS[action])
            raise InvalidInputError(
                f"{action.value} applies to {kinds}, not {fields['kind']!r}",
                obj="action request",
                field="kind",
            )
        return cls(action, res, fields["namespace"], fields["name"])


def action_patch(action: Action, generation: int | None) -> dict[str, Any]:
    """The merge patch of `action`, for an object at `generation` (the annotations' value)."""
    if action in (Action.PAUSE, Action.RESUME):
        return {"spec": {"paused": action is Action.PAUSE}}
    return {"metadata": {"annotations": {_ANNOTATIONS[action]: str(generation or 0)}}}


def perform(store: Store, request: ActionRequest) -> Obj:
    """Read the object, patch it; the store's errors (Forbidden, NotFound) carry the server's
    message."""
    generation = None
    if request.action in _ANNOTATIONS:
        current = store.get(request.res, request.name, request.namespace)
        generation = (current.get("metadata") or {}).get("generation")
    patch = action_patch(request.action, generation)
    return store.patch(request.res, request.name, patch, request.namespace)
