from __future__ import annotations

from typing import Any

import pytest

from bundler.api.bundle import DeletionGuard
from bundler.core.deletion_guard import ALLOW_DELETION, DeletionHold, deletion_hold

# (guard, deleting, existing, annotations, held)
GUARD_CASES: list[tuple[str, dict[str, Any] | None, int, int, dict[str, str], bool]] = [
    ("nothing-deleted", None, 0, 10, {}, False),
    ("default-six-of-ten-is-held", None, 6, 10, {}, True),
    ("default-five-is-never-held", None, 5, 5, {}, False),
    ("default-half-is-not-held", None, 6, 12, {}, False),
    ("default-just-over-half-is-held", None, 7, 12, {}, True),
    ("default-all-of-six-is-held", None, 6, 6, {}, True),
    ("default-six-of-hundred-is-not-held", None, 6, 100, {}, False),
    ("disabled-never-holds", {"enabled": False}, 10, 10, {}, False),
    ("enabled-explicitly-holds", {"enabled": True}, 10, 10, {}, True),
    ("lower-count", {"maxDeletions": 0}, 1, 1, {}, True),
    ("lower-percent", {"maxDeletionsPercent": 10}, 6, 50, {}, True),
    ("percent-100-never-holds", {"maxDeletionsPercent": 100}, 10, 10, {}, False),
    ("allowed-for-this-generation", None, 10, 10, {ALLOW_DELETION: "3"}, False),
    ("allowance-for-another-generation", None, 10, 10, {ALLOW_DELETION: "2"}, True),
    ("allowance-not-a-number", None, 10, 10, {ALLOW_DELETION: "yes"}, True),
]


@pytest.mark.parametrize(
    ("guard", "deleting", "existing", "annotations", "held"),
    [c[1:] for c in GUARD_CASES],
    ids=[c[0] for c in GUARD_CASES],
)
def test_mass_deletion_is_held(
    guard: dict[str, Any] | None,
    deleting: int,
    existing: int,
    annotations: dict[str, str],
    held: bool,
) -> None:
    parsed = None if guard is None else DeletionGuard.model_validate(guard)
    hold = deletion_hold(parsed, deleting, existing, generation=3, annotations=annotations)
    assert (hold is not None) == held


def test_held_deletion_message_gives_counts_and_the_way_out() -> None:
    hold = deletion_hold(None, 8, 10, generation=4, annotations={})
    assert hold == DeletionHold(8, 10, 4)
    assert hold.message() == (
        "this change would delete 8 of the bundle's 10 BundleDeployments; nothing is deleted "
        'until it is reverted or the Bundle is annotated bundler.dev/allow-deletion: "4"'
    )
