"""Answers a registry gave for a Bundle, kept for its generation until its pollInterval passes.

Version ranges (bundler.resolution.version_resolution) and images
(bundler.resolution.image_resolution) are asked once per Bundle generation and again every
`spec.helm.pollInterval`; this keeps the answers in between. A new generation (or a Bundle deleted
and created again: a new uid) starts afresh.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from bundler.api.bundle import Bundle
from bundler.core.content import poll_interval
from bundler.core.durations import duration_seconds
from bundler.runtime.clock import Clock

Answers = TypeVar("Answers", bound=Mapping[Any, Any])


@dataclass(frozen=True)
class Kept(Generic[Answers]):
    uid: str
    generation: int
    at: float
    answers: Answers


class PollCache(Generic[Answers]):
    """The answers of each Bundle (by `namespace/name`), while its generation and pollInterval
    allow."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._by_bundle: dict[str, Kept[Answers]] = {}

    def get(self, bundle: Bundle) -> Kept[Answers] | None:
        """What is kept for the Bundle's generation, unless its pollInterval has passed."""
        with self._lock:
            kept = self._by_bundle.get(_ident(bundle))
        if kept is None or (kept.uid, kept.generation) != _generation(bundle):
            return None
        interval = poll_interval(bundle.spec)
        if interval is not None and self._clock.monotonic() - kept.at >= duration_seconds(interval):
            return None
        return kept

    def put(self, bundle: Bundle, answers: Answers, at: float | None = None) -> None:
        """Keep `answers`, asked at `at` (clock seconds; default now)."""
        uid, generation = _generation(bundle)
        when = self._clock.monotonic() if at is None else at
        with self._lock:
            self._by_bundle[_ident(bundle)] = Kept(uid, generation, when, answers)

    def seconds_until_poll(self, bundle: Bundle) -> float | None:
        """When the Bundle is due to be asked again (pollInterval), if it has answers kept."""
        interval = poll_interval(bundle.spec)
        kept = self.get(bundle)
        if interval is None or kept is None or not kept.answers:
            return None
        return max(0.0, kept.at + duration_seconds(interval) - self._clock.monotonic())

    def forget(self, bundle: str) -> None:
        with self._lock:
            self._by_bundle.pop(bundle, None)


def _ident(bundle: Bundle) -> str:
    return f"{bundle.metadata.namespace}/{bundle.metadata.name}"


def _generation(bundle: Bundle) -> tuple[str, int]:
    return (bundle.metadata.uid or "", bundle.metadata.generation or 0)
