"""The rollout gates as a simulated run sees them: what each Bundle waited at, when, and the
approvals the run gives in the user's place.

Read from the Bundles' status (display.gate, status.rollout), as a user watching `kubectl get
bundles` would. With `approve_after`, a partition waiting for approval is approved that many
clock seconds after the run first saw it wait, exactly as `bundler rollout approve BUNDLE
--partition P` approves it (the annotation of bundler.core.rollout_gates); without it nothing is
approved, and the Bundle keeps waiting.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import ValidationError

from bundler.api.bundle import Bundle, PartitionState
from bundler.api.resources import BUNDLE
from bundler.core.approvals import APPROVE, approval_annotation
from bundler.store.protocol import Obj, Store


@dataclass(frozen=True)
class GateEvent:
    """At `at` seconds into the run, `bundle` started waiting at `gate` (empty: no gate any
    more), or the run approved a partition (`gate` says which)."""

    at: float
    bundle: str
    gate: str


@dataclass
class GateLog:
    approve_after: float | None = None
    events: list[GateEvent] = field(default_factory=list)
    _shown: dict[str, str] = field(default_factory=dict)
    # (bundle, partition, generation) -> when the run first saw it wait for approval
    _waiting: dict[tuple[str, str, int], float] = field(default_factory=dict)

    def look(self, store: Store, elapsed: float) -> bool:
        """Record the gates shown now, approve what is due; whether an approval is pending
        (the run must not end before it)."""
        pending = False
        for bundle in store.list(BUNDLE).items:
            ref = _ref(bundle)
            status = bundle.get("status") or {}
            gate = str((status.get("display") or {}).get("gate") or "")
            if gate != self._shown.get(ref, ""):
                self._shown[ref] = gate
                self.events.append(GateEvent(round(elapsed, 1), ref, gate))
            if self.approve_after is not None:
                pending |= self._approve(store, bundle, elapsed)
        return pending

    def _approve(self, store: Store, bundle: Obj, elapsed: float) -> bool:
        assert self.approve_after is not None
        generation = int(bundle["metadata"].get("generation") or 0)
        status = bundle.get("status") or {}
        if status.get("observedGeneration") != generation:
            return False
        partitions = (status.get("rollout") or {}).get("partitions") or []
        known = [str(p.get("name")) for p in partitions]
        waiting = [
            str(p.get("name"))
            for p in partitions
            if p.get("state") == PartitionState.WAITING_FOR_APPROVAL.value
        ]
        ref = _ref(bundle)
        for partition in waiting:
            since = self._waiting.setdefault((ref, partition, generation), elapsed)
            if elapsed - since < self.approve_after:
                continue
            meta = bundle["metadata"]
            try:
                model = Bundle.model_validate({k: bundle[k] for k in ("metadata", "spec")})
            except ValidationError:
                return False
            value = approval_annotation(model, partition, known)
            store.patch(BUNDLE, meta["name"], {"metadata": {"annotations": {APPROVE: value}}},
                        meta.get("namespace"))  # fmt: skip
            self.events.append(
                GateEvent(round(elapsed, 1), ref, f"approved {partition} (--approve-after)")
            )
            bundle["metadata"].setdefault("annotations", {})[APPROVE] = value
        return bool(waiting)


def _ref(obj: Obj) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace')}/{meta['name']}"
