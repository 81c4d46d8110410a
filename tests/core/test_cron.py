from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from bundler.core.cron import next_fire, parse_cron, previous_fire
from bundler.errors import InvalidInputError

BERLIN = ZoneInfo("Europe/Berlin")
# A Wednesday.
NOON = datetime(2026, 3, 25, 12, 0, tzinfo=UTC)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


# (id, expression, zone, from, the next firing, the previous one at or before `from`)
FIRES = [
    ("every-minute", "* * * * *", UTC, NOON, "2026-03-25T12:01Z", "2026-03-25T12:00Z"),
    (
        "step",
        "*/15 * * * *",
        UTC,
        at("2026-03-25T12:07Z"),
        "2026-03-25T12:15Z",
        "2026-03-25T12:00Z",
    ),
    ("range-and-list", "0 9-17/4 * * *", UTC, NOON, "2026-03-25T13:00Z", "2026-03-25T09:00Z"),
    ("weekdays", "0 2 * * MON-FRI", UTC, NOON, "2026-03-26T02:00Z", "2026-03-25T02:00Z"),
    ("sunday-as-7", "30 4 * * 7", UTC, NOON, "2026-03-29T04:30Z", "2026-03-22T04:30Z"),
    ("month-names", "0 0 1 JAN,JUL *", UTC, NOON, "2026-07-01T00:00Z", "2026-01-01T00:00Z"),
    # Both day fields restricted: either matches (the 1st, or a Friday).
    ("day-or-weekday", "0 0 1 * FRI", UTC, NOON, "2026-03-27T00:00Z", "2026-03-20T00:00Z"),
    ("macro", "@weekly", UTC, NOON, "2026-03-29T00:00Z", "2026-03-22T00:00Z"),
    ("leap-day", "0 3 29 2 *", UTC, NOON, "2028-02-29T03:00Z", "2024-02-29T03:00Z"),
    ("zone", "0 2 * * *", BERLIN, NOON, "2026-03-26T01:00Z", "2026-03-25T01:00Z"),
    # 29 March 2026 02:30 does not exist in Berlin: clocks jump from 02:00 to 03:00.
    (
        "spring-gap",
        "30 2 * * *",
        BERLIN,
        at("2026-03-28T12:00Z"),
        "2026-03-30T00:30Z",
        "2026-03-28T01:30Z",
    ),
    # 25 October 2026 02:30 exists twice in Berlin: the first occurrence (CEST) fires.
    (
        "autumn-twice",
        "30 2 * * *",
        BERLIN,
        at("2026-10-24T12:00Z"),
        "2026-10-25T00:30Z",
        "2026-10-24T00:30Z",
    ),
]


@pytest.mark.parametrize(
    ("expression", "zone", "start", "following", "preceding"),
    [c[1:] for c in FIRES],
    ids=[c[0] for c in FIRES],
)
def test_fires(
    expression: str, zone: ZoneInfo, start: datetime, following: str, preceding: str
) -> None:
    cron = parse_cron(expression)
    assert next_fire(cron, start, zone) == at(following)
    assert previous_fire(cron, start, zone) == at(preceding)


def test_next_is_strictly_after_and_previous_includes_the_instant() -> None:
    cron = parse_cron("0 12 * * *")
    assert next_fire(cron, NOON, UTC) == at("2026-03-26T12:00Z")
    assert previous_fire(cron, NOON, UTC) == NOON


def test_previous_stops_at_not_before() -> None:
    cron = parse_cron("0 0 * * *")
    assert previous_fire(cron, NOON, UTC, not_before=at("2026-03-25T06:00Z")) is None
    assert previous_fire(cron, NOON, UTC, not_before=at("2026-03-25T00:00Z")) == at(
        "2026-03-25T00:00Z"
    )


BAD = [
    ("too-few-fields", "* * *", "needs 5 fields"),
    ("out-of-range", "61 * * * *", "minute field '61' is out of range (0-59)"),
    ("zero-step", "*/0 * * * *", "step that is not a positive number"),
    ("backwards-range", "0 5-1 * * *", "hour field '5-1' is a range whose start is after"),
    ("not-a-name", "0 0 * FOO *", "month field 'FOO' is not a number or a name"),
    ("impossible-day", "0 0 30 2 *", "names no day that exists"),
    ("empty", "", "needs 5 fields"),
]


@pytest.mark.parametrize(("expression", "message"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_expressions_say_which_field(expression: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_cron(expression)
