"""Approvals of a rollout: the Bundle annotation that lets partitions past
`rolloutStrategy.approval`, for one generation only. Pure.

The annotation APPROVE approves partitions for the Bundle generation it names: `"<generation>"`
every partition, `{"generation": G, "partitions": [...]}` those named. A value about another
generation, or one that does not parse, approves nothing, so an approval never carries over to a
later spec. `bundler rollout approve` writes it (`approval_annotation`), adding to what the
annotation already approves for the same generation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bundler.api.bundle import Approval, Bundle
from bundler.errors import BundlerError

APPROVE = "bundler.dev/approve-rollout"


@dataclass(frozen=True)
class Approved:
    """What the Bundle's approval annotation approves for its current generation."""

    every: bool = False
    partitions: frozenset[str] = frozenset()

    def covers(self, partition: str) -> bool:
        return self.every or partition in self.partitions


def approved(annotations: Mapping[str, str], generation: int) -> Approved:
    """What `annotations` approve for `generation` (a value about another one: nothing)."""
    parsed = parse_approval(annotations.get(APPROVE))
    if parsed is None or parsed[0] != generation:
        return Approved()
    names = parsed[1]
    return Approved(every=True) if names is None else Approved(partitions=frozenset(names))


def parse_approval(value: str | None) -> tuple[int, tuple[str, ...] | None] | None:
    """(generation, partitions or None for every one) of an annotation value; None when it is
    not one."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return int(text), None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    generation, names = data.get("generation"), data.get("partitions")
    if not isinstance(generation, int) or isinstance(generation, bool):
        return None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    return generation, tuple(names)


def approval_value(current: str | None, generation: int, partition: str | None) -> str:
    """The annotation value approving `partition` (None: every partition) for `generation`,
    keeping what `current` already approves for that generation."""
    if partition is None:
        return str(generation)
    parsed = parse_approval(current)
    names: list[str] = []
    if parsed is not None and parsed[0] == generation:
        if parsed[1] is None:
            return str(generation)
        names = list(parsed[1])
    if partition not in names:
        names.append(partition)
    return json.dumps({"generation": generation, "partitions": names}, separators=(",", ":"))


def approval_annotation(bundle: Bundle, partition: str | None, known: Sequence[str] = ()) -> str:
    """The value of the Bundle's APPROVE annotation that approves `partition` (None: every
    partition) for its current generation. `known` are partition names its status shows (the
    automatic ones). BundlerError when the Bundle waits for no approval, or not for that
    partition."""
    where = f"Bundle {bundle.metadata.namespace}/{bundle.metadata.name}"
    strategy = bundle.spec.rolloutStrategy
    approval = strategy.approval if strategy is not None else None
    if strategy is None or approval is None:
        raise BundlerError(
            "has no spec.rolloutStrategy.approval: its rollout waits for no approval", obj=where
        )
    if partition is not None:
        waiting = (
            list(approval.partitions)
            if approval.partitions is not None
            else list(dict.fromkeys([*(p.name for p in strategy.partitions), *known]))
        )
        if partition not in waiting:
            listed = ", ".join(waiting) or "none known yet"
            raise BundlerError(
                f"partition {partition!r} waits for no approval (partitions that do: {listed})",
                obj=where,
                field="--partition",
            )
    generation = bundle.metadata.generation or 0
    return approval_value(bundle.metadata.annotations.get(APPROVE), generation, partition)


def needs_approval(approval: Approval | None, partition: str, manual: bool) -> bool:
    """Whether `partition` waits for an approval under `approval` (`manual`: it is one of
    rolloutStrategy.partitions)."""
    if approval is None:
        return False
    if approval.partitions is None:
        return True
    return manual and partition in approval.partitions
