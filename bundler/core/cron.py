"""Cron expressions: the five fields of a crontab line, and the times they name in a time zone.

Pure: the caller hands in the instant to search from and the zone. The grammar is Vixie cron's,
as Kubernetes' CronJob reads it: minute (0-59), hour (0-23), day of month (1-31), month (1-12 or
JAN-DEC), day of week (0-7 or SUN-SAT, 0 and 7 both Sunday); each field `*`, a number or name, a
range `a-b`, a step `*/n` or `a-b/n` or `a/n` (from a to the field's end), or a comma-separated
list of these; or one of @yearly (@annually), @monthly, @weekly, @daily (@midnight), @hourly.
When both day fields are restricted (neither starts with `*`), a day matching either counts.

Times are searched on the wall clock of the zone: a time that does not exist there (skipped by a
daylight-saving change) is not a firing time, and a time that exists twice fires at its first
occurrence. Searches look at most SEARCH_DAYS ahead or back.
"""

from __future__ import annotations

import calendar
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from bundler.errors import InvalidInputError

# Long enough to reach any valid expression's next firing (29 February needs up to 8 years
# when the day of week is restricted as well).
SEARCH_DAYS = 366 * 9
_MARGIN = timedelta(hours=3)  # more than any daylight-saving shift, around the first day

MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = {name: n for n, name in enumerate(calendar.month_abbr) if name}
_DAYS = {name: (n + 1) % 7 for n, name in enumerate(calendar.day_abbr)}


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: dict[str, int]


_FIELDS = (
    _Field("minute", 0, 59, {}),
    _Field("hour", 0, 23, {}),
    _Field("day of month", 1, 31, {}),
    _Field("month", 1, 12, {k.upper(): v for k, v in _MONTHS.items()}),
    _Field("day of week", 0, 7, {k.upper(): v for k, v in _DAYS.items()}),
)


@dataclass(frozen=True)
class Cron:
    """A parsed expression; `text` is what was written."""

    text: str
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    days_restricted: bool
    weekdays_restricted: bool

    def matches_day(self, day: date) -> bool:
        if day.month not in self.months:
            return False
        by_date = day.day in self.days
        by_weekday = day.isoweekday() % 7 in self.weekdays
        if self.days_restricted and self.weekdays_restricted:
            return by_date or by_weekday
        if self.days_restricted:
            return by_date
        if self.weekdays_restricted:
            return by_weekday
        return True


def parse_cron(text: str) -> Cron:
    """The expression `text`; InvalidInputError saying which field is wrong and why."""
    expression = MACROS.get(text.strip().lower(), text)
    parts = expression.split()
    if len(parts) != len(_FIELDS):
        raise InvalidInputError(
            f"{text!r} is not a cron expression: it needs 5 fields (minute hour day-of-month "
            f"month day-of-week), or @hourly, @daily, @weekly, @monthly, @yearly; it has "
            f"{len(parts)}"
        )
    values = [_parse_field(part, spec, text) for part, spec in zip(parts, _FIELDS, strict=True)]
    minutes, hours, days, months, weekdays = values
    cron = Cron(
        text=text,
        minutes=tuple(sorted(minutes)),
        hours=tuple(sorted(hours)),
        days=frozenset(days),
        months=frozenset(months),
        weekdays=frozenset(d % 7 for d in weekdays),
        days_restricted=not parts[2].startswith("*"),
        weekdays_restricted=not parts[4].startswith("*"),
    )
    if not _ever_fires(cron):
        raise InvalidInputError(f"{text!r} names no day that exists (such as 30 February)")
    return cron


def _parse_field(part: str, spec: _Field, text: str) -> set[int]:
    found: set[int] = set()
    for item in part.split(","):
        found |= _parse_item(item, spec, text)
    return found


def _parse_item(item: str, spec: _Field, text: str) -> set[int]:
    def bad(why: str) -> InvalidInputError:
        return InvalidInputError(f"{text!r}: the {spec.name} field {item!r} {why}")

    span, slash, step_text = item.partition("/")
    step = 1
    if slash:
        if not step_text.isdigit() or int(step_text) == 0:
            raise bad("has a step that is not a positive number")
        step = int(step_text)
    if span == "*":
        low, high = spec.low, spec.high
    elif "-" in span:
        first, _, last = span.partition("-")
        low, high = _value(first, spec, bad), _value(last, spec, bad)
        if low > high:
            raise bad("is a range whose start is after its end")
    else:
        low = _value(span, spec, bad)
        high = spec.high if slash else low
    return set(range(low, high + 1, step))


def _value(word: str, spec: _Field, bad: Callable[[str], InvalidInputError]) -> int:
    upper = word.upper()
    if upper in spec.names:
        return spec.names[upper]
    if not word.isdigit():
        raise bad("is not a number" + (" or a name" if spec.names else ""))
    value = int(word)
    if not spec.low <= value <= spec.high:
        raise bad(f"is out of range ({spec.low}-{spec.high})")
    return value


def _ever_fires(cron: Cron) -> bool:
    """Whether some date matches: only a day of month no month has (with the day of week
    unrestricted) never does."""
    if not cron.days_restricted or cron.weekdays_restricted:
        return True
    leap = 2000
    return any(
        day <= calendar.monthrange(leap, month)[1] for month in cron.months for day in cron.days
    )


def next_fire(cron: Cron, after: datetime, zone: tzinfo) -> datetime | None:
    """The first time strictly after `after` that `cron` names (UTC), None within SEARCH_DAYS."""
    local = after.astimezone(zone).replace(tzinfo=None)
    bound = local - _margin(zone, after)
    for day in _days(local.date() - timedelta(days=1), 1):
        for moment in _moments(cron, day, zone, bound, reverse=False):
            if moment > after:
                return moment.astimezone(UTC)
    return None


def previous_fire(
    cron: Cron, at: datetime, zone: tzinfo, not_before: datetime | None = None
) -> datetime | None:
    """The last time at or before `at` that `cron` names (UTC); None when there is none at or
    after `not_before` (default: within SEARCH_DAYS)."""
    local = at.astimezone(zone).replace(tzinfo=None)
    bound = local + _margin(zone, at)
    first = None if not_before is None else not_before.astimezone(zone).date() - timedelta(days=1)
    for day in _days(local.date() + timedelta(days=1), -1):
        if first is not None and day < first:
            return None
        for moment in _moments(cron, day, zone, bound, reverse=True):
            if moment <= at:
                if not_before is not None and moment < not_before:
                    return None
                return moment.astimezone(UTC)
    return None


def _margin(zone: tzinfo, at: datetime) -> timedelta:
    """How far the wall clock around `at` may disagree with the order of instants: only near a
    daylight-saving change does a wall-clock time name another instant than it seems to."""
    before, after = (at - _MARGIN).astimezone(zone), (at + _MARGIN).astimezone(zone)
    return _MARGIN if before.utcoffset() != after.utcoffset() else timedelta(0)


def _days(start: date, step: int) -> Iterator[date]:
    for n in range(SEARCH_DAYS + 2):
        yield start + timedelta(days=n * step)


def _moments(
    cron: Cron, day: date, zone: tzinfo, bound: datetime, *, reverse: bool
) -> Iterator[datetime]:
    """The times `cron` names on `day`'s wall clock that exist in `zone`, in order (backwards
    with `reverse`), from the wall-clock `bound` on (up to it, with `reverse`)."""
    if not cron.matches_day(day):
        return
    # The (hour, minute) from which on (up to which, with reverse) this day counts.
    if day == bound.date():
        edge = (bound.hour, bound.minute)
    elif (day > bound.date()) == reverse:
        return
    else:
        edge = (24, 0) if reverse else (-1, 0)
    hours = reversed(cron.hours) if reverse else cron.hours
    for hour in hours:
        if (hour > edge[0]) if reverse else (hour < edge[0]):
            continue
        minutes = reversed(cron.minutes) if reverse else cron.minutes
        for minute in minutes:
            if hour == edge[0] and ((minute > edge[1]) if reverse else (minute < edge[1])):
                continue
            wall = datetime.combine(day, time(hour, minute))
            moment = wall.replace(tzinfo=zone)
            if moment.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != wall:
                continue  # skipped by a daylight-saving change
            yield moment
