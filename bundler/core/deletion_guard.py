"""The deletion guard: whether a change may delete the BundleDeployments it no longer targets.

A selector typo, a label removed from a group or a deleted ClusterGroup can untarget most of a
fleet in one step, and deleting a BundleDeployment uninstalls its release. So a change that would
delete more than `maxDeletions` (default 5) and more than `maxDeletionsPercent` (default 50)
percent of a Bundle's BundleDeployments is held: nothing is deleted until the change is reverted
or the Bundle carries the annotation ALLOW_DELETION naming its current generation (an allowance
for one generation, so it never silently covers a later change). `deletionGuard.enabled: false`
turns the guard off. Deleting the Bundle itself is not guarded: that is an explicit request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bundler.api.bundle import DeletionGuard

ALLOW_DELETION = "bundler.dev/allow-deletion"
DEFAULT_MAX_DELETIONS = 5
DEFAULT_MAX_DELETIONS_PERCENT = 50


@dataclass(frozen=True)
class DeletionHold:
    """A held deletion: how many deployments the change would delete, out of how many."""

    deleting: int
    existing: int
    generation: int

    def message(self) -> str:
        return (
            f"this change would delete {self.deleting} of the bundle's {self.existing} "
            f"BundleDeployments; nothing is deleted until it is reverted or the Bundle is "
            f'annotated {ALLOW_DELETION}: "{self.generation}"'
        )


def deletion_hold(
    guard: DeletionGuard | None,
    deleting: int,
    existing: int,
    *,
    generation: int,
    annotations: Mapping[str, str],
) -> DeletionHold | None:
    """The hold on deleting `deleting` of `existing` deployments, or None when they may go."""
    guard = guard or DeletionGuard()
    if guard.enabled is False or annotations.get(ALLOW_DELETION) == str(generation):
        return None
    count = DEFAULT_MAX_DELETIONS if guard.maxDeletions is None else guard.maxDeletions
    percent = (
        DEFAULT_MAX_DELETIONS_PERCENT
        if guard.maxDeletionsPercent is None
        else guard.maxDeletionsPercent
    )
    if deleting > count and deleting * 100 > percent * existing:
        return DeletionHold(deleting, existing, generation)
    return None
