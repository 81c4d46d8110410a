"""The Bundle status roll-up kept per Bundle, brought up to date by the placements that changed.

Rolling a Bundle's status up from scratch reads every targeted cluster; after one deployment's
change that is the fleet's cost for one cluster's news. So each Bundle keeps a Tally
(bundler.core.summary) with the outcome it was built from: the routes touch the (bundle, cluster)
placements whose deployment or liveness changed, and the next roll-up puts only those again. A new
outcome (other clusters targeted, other template errors), a rejected Bundle, or a resync builds it
from scratch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from bundler.core.summary import Placement, Tally
from bundler.manager.memo.outcomes import Outcome


@dataclass
class _Kept:
    outcome: Outcome
    tally: Tally


class Tallies:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, _Kept] = {}
        self._touched: dict[str, set[str]] = {}
        self.placements_put = 0

    def touch(self, bundle: str, cluster: str) -> None:
        """The placement of `bundle` on `cluster` may have changed: put it again next time."""
        with self._lock:
            self._touched.setdefault(bundle, set()).add(cluster)

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()

    def forget(self, bundle: str) -> None:
        with self._lock:
            self._kept.pop(bundle, None)
            self._touched.pop(bundle, None)

    def tally(
        self,
        bundle: str,
        outcome: Outcome,
        every: Callable[[], list[Placement]],
        one: Callable[[str], Placement],
    ) -> Tally:
        """The Bundle's tally now; `every` gives all its placements, `one` a cluster's. One
        roll-up of a Bundle runs at a time (its status controller's key), so the tally is its."""
        with self._lock:
            # Taken before reading: a change after this point touches it again for the next run.
            touched = self._touched.pop(bundle, set())
            kept = self._kept.get(bundle)
        if kept is None or outcome.targeted is None or kept.outcome != outcome:
            tally = Tally()
            placements = every()
            for placement in placements:
                tally.put(placement)
            put = len(placements)
        else:
            tally = kept.tally
            targeted = outcome.targeted
            for cluster in touched:
                if cluster in targeted:
                    tally.put(one(cluster))
                else:
                    tally.remove(cluster)
            put = len(touched)
        with self._lock:
            self._kept[bundle] = _Kept(outcome, tally)
            self.placements_put += put
        return tally
