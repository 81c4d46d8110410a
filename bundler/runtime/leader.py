"""Leader election on a coordination.k8s.io/v1 Lease, as client-go does it, on the host's timers.

Every `retry_period` each candidate reads the Lease: the holder renews it (renewTime = now), another
candidate takes it once `renewTime + leaseDurationSeconds` has passed, or when no one holds it.
Writes are updates with the read resourceVersion, so of two candidates racing only one wins (the
other gets Conflict). A leader that sees another holder stops leading at once; one that cannot
renew (store errors, lost races) stops once `renew_deadline` has passed since its last renewal,
which is shorter than the lease so it stops before anyone else may start.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any

from bundler.api.resources import LEASE
from bundler.errors import BundlerError
from bundler.runtime.clock import Clock
from bundler.runtime.timers import Timer, Timers
from bundler.store.errors import AlreadyExists, NotFound
from bundler.store.protocol import Obj, Store

log = logging.getLogger(__name__)


# client-go's defaults (seconds).
DEFAULT_LEASE_DURATION = 15
DEFAULT_RENEW_DEADLINE = 10.0
DEFAULT_RETRY_PERIOD = 2.0


@dataclass(frozen=True)
class LeaseConfig:
    """Which Lease, who we are, and the timings (seconds)."""

    name: str
    namespace: str
    identity: str
    lease_duration: int = DEFAULT_LEASE_DURATION
    renew_deadline: float = DEFAULT_RENEW_DEADLINE
    retry_period: float = DEFAULT_RETRY_PERIOD

    def __post_init__(self) -> None:
        if not 0 < self.retry_period < self.renew_deadline < self.lease_duration:
            raise ValueError(
                f"lease {self.namespace}/{self.name}: need 0 < retry_period ({self.retry_period}) "
                f"< renew_deadline ({self.renew_deadline}) < lease_duration ({self.lease_duration})"
            )


class Attempt(Enum):
    """The outcome of one try to acquire or renew."""

    HELD = "held"  # we hold the lease now
    HELD_ELSEWHERE = "held elsewhere"  # another candidate holds an unexpired lease
    FAILED = "failed"  # the store refused or failed; try again next period


def micro_time(moment: datetime) -> str:
    """Kubernetes MicroTime: RFC 3339 in UTC with microseconds."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    def __init__(
        self,
        store: Store,
        config: LeaseConfig,
        clock: Clock,
        *,
        on_started_leading: Callable[[], None] | None = None,
        on_stopped_leading: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self._store = store
        self._clock = clock
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._lock = threading.Lock()
        self._leading = False
        self._last_renewal = 0.0
        self._timer: Timer | None = None
        self._running = False

    @property
    def is_leading(self) -> bool:
        return self._leading

    def start(self, timers: Timers) -> None:
        """Try at once, then every retry period, on `timers`."""
        with self._lock:
            self._running = True
            self._timer = timers.call_later(0.0, lambda: self._tick_and_reschedule(timers))

    def stop(self) -> None:
        """Stop trying; the lease is kept until `release()` or until it expires."""
        with self._lock:
            self._running = False
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def tick(self) -> Attempt:
        """One attempt to acquire or renew; fires the callbacks when leadership changes."""
        try:
            attempt = self._try_acquire_or_renew()
        except BundlerError as error:
            log.info("lease %s: cannot acquire or renew: %s", self._where(), error)
            attempt = Attempt.FAILED
        except Exception:
            log.exception("lease %s: cannot acquire or renew", self._where())
            attempt = Attempt.FAILED
        self._settle(attempt)
        return attempt

    def release(self) -> None:
        """Give the lease up (holder cleared): another candidate need not wait for it to expire."""
        if not self._leading:
            return
        try:
            lease = self._store.get(LEASE, self.config.name, self.config.namespace)
            spec = lease.setdefault("spec", {})
            if spec.get("holderIdentity") == self.config.identity:
                now = micro_time(self._clock.now())
                spec.update(
                    holderIdentity="", leaseDurationSeconds=1, acquireTime=now, renewTime=now
                )
                self._store.update(LEASE, lease)
        except BundlerError as error:
            log.info("lease %s: cannot release: %s", self._where(), error)
        self._change_leading(False)

    def _tick_and_reschedule(self, timers: Timers) -> None:
        if not self._running:
            return
        self.tick()
        with self._lock:
            if self._running:
                self._timer = timers.call_later(
                    self.config.retry_period, lambda: self._tick_and_reschedule(timers)
                )

    def _try_acquire_or_renew(self) -> Attempt:
        now = self._clock.now()
        try:
            lease = self._store.get(LEASE, self.config.name, self.config.namespace)
        except NotFound:
            return self._create(now)
        spec: dict[str, Any] = lease.setdefault("spec", {})
        holder = spec.get("holderIdentity") or ""
        mine = holder == self.config.identity
        if holder and not mine and not _expired(spec, now):
            return Attempt.HELD_ELSEWHERE
        if not mine:
            spec["acquireTime"] = micro_time(now)
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + (1 if holder else 0)
        spec.update(
            holderIdentity=self.config.identity,
            leaseDurationSeconds=self.config.lease_duration,
            renewTime=micro_time(now),
        )
        # Conflict (someone else wrote first) propagates and counts as a failed attempt.
        self._store.update(LEASE, lease)
        return Attempt.HELD

    def _create(self, now: datetime) -> Attempt:
        lease: Obj = {
            "apiVersion": LEASE.api_version,
            "kind": LEASE.kind,
            "metadata": {"name": self.config.name, "namespace": self.config.namespace},
            "spec": {
                "holderIdentity": self.config.identity,
                "leaseDurationSeconds": self.config.lease_duration,
                "acquireTime": micro_time(now),
                "renewTime": micro_time(now),
                "leaseTransitions": 0,
            },
        }
        try:
            self._store.create(LEASE, lease)
        except AlreadyExists:
            return Attempt.FAILED
        return Attempt.HELD

    def _settle(self, attempt: Attempt) -> None:
        now = self._clock.monotonic()
        with self._lock:
            if attempt is Attempt.HELD:
                self._last_renewal = now
        if attempt is Attempt.HELD:
            self._change_leading(True)
        elif attempt is Attempt.HELD_ELSEWHERE or self._past_renew_deadline(now):
            self._change_leading(False)

    def _past_renew_deadline(self, now: float) -> bool:
        return now - self._last_renewal >= self.config.renew_deadline

    def _change_leading(self, leading: bool) -> None:
        with self._lock:
            changed = self._leading != leading
            self._leading = leading
        if not changed:
            return
        callback = self._on_started if leading else self._on_stopped
        log.log(
            logging.INFO if leading else logging.WARNING,
            "lease %s: %s %s",
            self._where(),
            self.config.identity,
            "started leading" if leading else "stopped leading",
        )
        if callback is not None:
            callback()

    def _where(self) -> str:
        return f"{self.config.namespace}/{self.config.name}"


def _expired(spec: dict[str, Any], now: datetime) -> bool:
    """Whether a lease's holder has let it lapse: renewTime + leaseDurationSeconds < now."""
    try:
        renewed = datetime.fromisoformat(str(spec["renewTime"]))
        duration = float(spec["leaseDurationSeconds"])
    except (KeyError, TypeError, ValueError):
        return True
    if renewed.tzinfo is None:
        renewed = renewed.replace(tzinfo=UTC)
    return renewed + timedelta(seconds=duration) < now
