"""Maintenance windows: whether a schedule allows changes at an instant, and its next window.

Pure: "now" is the caller's. A `Schedule` (bundler.api.schedule) is compiled once
(`compile_schedule`, which says which field is wrong) into crons and durations in its time zone.
It is open at an instant when that instant lies in one of its windows (or it has none) and in
none of its deny windows; a window started at `s` with duration `d` covers [s, s + d). Windows
that overlap or touch merge. Searches look at most HORIZON ahead and take at most SEARCH_STEPS
steps: a schedule that never opens within them has no next window.

Where both a Bundle and a Cluster have a schedule, a change to that cluster needs both open
(`Schedules`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bundler.api.schedule import Schedule, ScheduleStatus, ScheduleWindow, TimeWindow
from bundler.core.cron import Cron, next_fire, parse_cron, previous_fire
from bundler.core.durations import parse_duration
from bundler.errors import InvalidInputError

HORIZON = timedelta(days=366)
SEARCH_STEPS = 64
# The instant before another: windows cover [start, end), so one ending at `s` touches `s`.
_INSTANT = timedelta(microseconds=1)


@dataclass(frozen=True)
class Window:
    """[start, end) in UTC; `end` None: no end within HORIZON."""

    start: datetime
    end: datetime | None

    def to_api(self) -> TimeWindow:
        return TimeWindow(start=_iso(self.start), end=None if self.end is None else _iso(self.end))


@dataclass(frozen=True)
class _Recurring:
    cron: Cron
    duration: timedelta


@dataclass(frozen=True)
class CompiledSchedule:
    zone: tzinfo
    windows: tuple[_Recurring, ...]
    deny: tuple[_Recurring, ...]

    def is_open(self, at: datetime) -> bool:
        return (not self.windows or self._covered(self.windows, at) is not None) and (
            self._covered(self.deny, at) is None
        )

    def next_open(self, at: datetime) -> datetime | None:
        """`at` when open, else the first instant after it that is; None within the bounds."""
        moment = at
        for _ in range(SEARCH_STEPS):
            if moment - at > HORIZON:
                return None
            denied = self._merged_end(self.deny, moment)
            if denied is not None:
                moment = denied
                continue
            if self.windows and self._covered(self.windows, moment) is None:
                starts = [next_fire(w.cron, moment, self.zone) for w in self.windows]
                found = [s for s in starts if s is not None]
                if not found:
                    return None
                moment = min(found)
                continue
            return moment
        return None

    def next_close(self, at: datetime) -> datetime | None:
        """The first instant at or after `at` (open) when it is closed; None within the
        bounds."""
        ends = []
        if self.windows:
            ends.append(self._merged_end(self.windows, at))
        denials = [next_fire(w.cron, at, self.zone) for w in self.deny]
        ends.extend(d for d in denials if d is not None)
        known = [e for e in ends if e is not None and e - at <= HORIZON]
        return min(known) if known else None

    def window(self, at: datetime) -> Window | None:
        """The window in effect at `at`, else the next one; None when none opens in bounds."""
        if self.is_open(at):
            return Window(self.opened(at), self.next_close(at))
        start = self.next_open(at)
        if start is None:
            return None
        return Window(start, self.next_close(start))

    def opened(self, at: datetime) -> datetime:
        """When the open stretch `at` lies in began: the start of its windows (with those
        overlapping or touching them, as far as SEARCH_STEPS look), or the end of the last deny
        window since, whichever is later. Open since before HORIZON: the midnight (UTC) that
        begins the HORIZON looked back over, so a status shows the same start all day."""
        floor = at - HORIZON
        start = floor
        if self.windows:
            start = max(start, self._merged_start(self.windows, at) or floor)
        for window in self.deny:
            fired = previous_fire(
                window.cron, at - window.duration, self.zone, not_before=start - window.duration
            )
            if fired is not None:
                start = max(start, fired + window.duration)
        if start > floor:
            return start
        return datetime.combine(floor.astimezone(UTC).date(), time(), tzinfo=UTC)

    def _covering(self, recurring: Sequence[_Recurring], at: datetime) -> list[Window]:
        """The windows of `recurring` covering `at` (of each cron, its latest start)."""
        found = []
        for window in recurring:
            start = previous_fire(window.cron, at, self.zone, not_before=at - window.duration)
            if start is not None and at < start + window.duration:
                found.append(Window(start, start + window.duration))
        return found

    def _covered(self, recurring: Sequence[_Recurring], at: datetime) -> datetime | None:
        """The end of the latest-ending window of `recurring` covering `at`, if one does."""
        ends = [window.end for window in self._covering(recurring, at) if window.end is not None]
        return max(ends) if ends else None

    def _merged_start(self, recurring: Sequence[_Recurring], at: datetime) -> datetime | None:
        """Where the windows of `recurring` covering `at` start, with those overlapping or
        touching them before (bounded by SEARCH_STEPS: then as far as was looked)."""
        start = self._covering_start(recurring, at)
        for _ in range(SEARCH_STEPS):
            if start is None:
                return None
            earlier = self._covering_start(recurring, start - _INSTANT)
            if earlier is None or earlier >= start:
                return start
            start = earlier
        return start

    def _covering_start(self, recurring: Sequence[_Recurring], at: datetime) -> datetime | None:
        """The start of the earliest-starting window of `recurring` covering `at`, if one does."""
        starts = [window.start for window in self._covering(recurring, at)]
        return min(starts) if starts else None

    def _merged_end(self, recurring: Sequence[_Recurring], at: datetime) -> datetime | None:
        """Where the windows of `recurring` covering `at` end, with those overlapping or
        touching them (bounded by SEARCH_STEPS: then as far as was looked)."""
        end = self._covered(recurring, at)
        for _ in range(SEARCH_STEPS):
            if end is None:
                return None
            further = self._covered(recurring, end)
            if further is None or further <= end:
                return end
            end = further
        return end


def compile_schedule(schedule: Schedule, *, obj: str, field: str) -> CompiledSchedule:
    """`schedule` ready to evaluate; InvalidInputError naming `obj` and the field under `field`
    for an unknown time zone, a bad cron expression or a zero duration."""
    zone: tzinfo = UTC
    if schedule.timeZone is not None:
        zone = _zone(schedule.timeZone, obj=obj, field=f"{field}.timeZone")
    return CompiledSchedule(
        zone,
        _recurring(schedule.windows, obj=obj, field=f"{field}.windows"),
        _recurring(schedule.deny, obj=obj, field=f"{field}.deny"),
    )


def _zone(name: str, *, obj: str, field: str) -> tzinfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInputError(
            f"{name!r} is not a time zone of the IANA database (e.g. Europe/Berlin, UTC)",
            obj=obj,
            field=field,
        ) from None


def _recurring(
    windows: Sequence[ScheduleWindow], *, obj: str, field: str
) -> tuple[_Recurring, ...]:
    found = []
    for i, window in enumerate(windows):
        try:
            cron = parse_cron(window.cron)
        except InvalidInputError as err:
            raise InvalidInputError(err.message, obj=obj, field=f"{field}[{i}].cron") from None
        duration = parse_duration(window.duration)
        if duration <= timedelta(0):
            raise InvalidInputError(
                "must be longer than zero", obj=obj, field=f"{field}[{i}].duration"
            )
        found.append(_Recurring(cron, duration))
    return tuple(found)


@dataclass(frozen=True)
class Schedules:
    """The schedules that must all be open for a change to one cluster."""

    each: tuple[CompiledSchedule, ...]

    def is_open(self, at: datetime) -> bool:
        return all(s.is_open(at) for s in self.each)

    def next_open(self, at: datetime) -> datetime | None:
        """The first instant at or after `at` when all are open; None within the bounds."""
        moment: datetime | None = at
        for _ in range(SEARCH_STEPS):
            if moment is None or moment - at > HORIZON:
                return None
            later: datetime | None = moment
            for schedule in self.each:
                later = schedule.next_open(later) if later is not None else None
            if later is None:
                return None
            if later == moment:
                return moment
            moment = later
        return None


def schedule_status(schedule: CompiledSchedule, now: datetime) -> ScheduleStatus:
    """What an object's status says of its own schedule at `now`."""
    window = schedule.window(now)
    return ScheduleStatus(
        open=schedule.is_open(now), window=None if window is None else window.to_api()
    )


def next_edge(schedule: CompiledSchedule, now: datetime) -> datetime | None:
    """When `schedule` next opens or closes after `now` (what its status shows then changes)."""
    window = schedule.window(now)
    if window is None:
        return None
    return window.start if window.start > now else window.end


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
