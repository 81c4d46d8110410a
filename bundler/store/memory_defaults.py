"""What the API server fills in for particular built-in kinds on every write.

Secrets fold `stringData` into base64 `data`; a Namespace's `status.phase` follows its
deletionTimestamp (Active, then Terminating), it carries the label `kubernetes.io/metadata.name`
with its name (whatever a write says) and, unless it names others, the `kubernetes` finalizer
in `spec.finalizers` (which only the namespace controller's removal of its content lifts).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping

from bundler.api.resources import NAMESPACE, SECRET, Resource
from bundler.store.errors import Invalid
from bundler.store.protocol import Obj

PHASE_ACTIVE = "Active"
PHASE_TERMINATING = "Terminating"
NAME_LABEL = "kubernetes.io/metadata.name"


def apply_kind_defaults(res: Resource, body: Obj, where: str) -> None:
    """Normalise `body` in place, as the real API server would before storing it."""
    if res == SECRET:
        _fold_string_data(body, where)
    elif res == NAMESPACE:
        meta = body.setdefault("metadata", {})
        terminating = meta.get("deletionTimestamp")
        body["status"] = {"phase": PHASE_TERMINATING if terminating else PHASE_ACTIVE}
        if isinstance(meta.get("name"), str):
            meta["labels"] = {**(meta.get("labels") or {}), NAME_LABEL: meta["name"]}
        spec = body.get("spec")
        if not isinstance(spec, dict) or "finalizers" not in spec:
            body["spec"] = {
                **(spec if isinstance(spec, dict) else {}),
                "finalizers": ["kubernetes"],
            }


def _fold_string_data(body: Obj, where: str) -> None:
    string_data = body.pop("stringData", None) or {}
    data = body.get("data") or {}
    if not isinstance(string_data, Mapping) or not isinstance(data, Mapping):
        raise Invalid("data and stringData must be maps", obj=where, field="data")
    merged = dict(data)
    for key, value in string_data.items():
        if not isinstance(value, str):
            raise Invalid("values must be strings", obj=where, field=f"stringData.{key}")
        merged[key] = base64.b64encode(value.encode()).decode()
    if merged:
        body["data"] = merged
    body.setdefault("type", "Opaque")
