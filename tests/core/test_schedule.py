from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bundler.api.schedule import Schedule
from bundler.core.schedule import Schedules, compile_schedule, next_edge, schedule_status
from bundler.errors import InvalidInputError

# Wednesday 25 March 2026, noon UTC.
NOON = datetime(2026, 3, 25, 12, 0, tzinfo=UTC)
NIGHTLY = {"windows": [{"cron": "0 2 * * *", "duration": "3h"}]}
SATURDAY_BERLIN = {
    "timeZone": "Europe/Berlin",
    "windows": [{"cron": "0 2 * * SAT", "duration": "2h"}],
}
OFFICE = {"windows": [{"cron": "0 9 * * MON-FRI", "duration": "8h"}]}
FREEZE = {"deny": [{"cron": "0 0 25 3 *", "duration": "48h"}]}


def compiled(spec: dict[str, Any]) -> Any:
    return compile_schedule(
        Schedule.model_validate(spec), obj="Bundle ws/app", field="spec.schedule"
    )


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


# (id, schedule, instant, open, the window in effect or next: start, end)
WINDOWS: list[tuple[str, dict[str, Any], datetime, bool, str | None, str | None]] = [
    # Open since before the year looked back over: the midnight that begins it.
    ("no-windows-always-open", {}, NOON, True, "2025-03-24T00:00Z", None),
    ("outside-nightly", NIGHTLY, NOON, False, "2026-03-26T02:00Z", "2026-03-26T05:00Z"),
    (
        "inside-nightly",
        NIGHTLY,
        at("2026-03-25T03:00Z"),
        True,
        "2026-03-25T02:00Z",
        "2026-03-25T05:00Z",
    ),
    (
        "window-end-is-outside",
        NIGHTLY,
        at("2026-03-25T05:00Z"),
        False,
        "2026-03-26T02:00Z",
        "2026-03-26T05:00Z",
    ),
    # 02:00 in Berlin is 01:00 UTC before the clocks change, 00:00 UTC after.
    ("time-zone", SATURDAY_BERLIN, NOON, False, "2026-03-28T01:00Z", "2026-03-28T03:00Z"),
    ("inside-office", OFFICE, NOON, True, "2026-03-25T09:00Z", "2026-03-25T17:00Z"),
    (
        "deny-ended-inside-a-window",
        {**OFFICE, "deny": [{"cron": "0 10 25 3 *", "duration": "1h"}]},
        NOON,
        True,
        "2026-03-25T11:00Z",
        "2026-03-25T17:00Z",
    ),
    ("between-denials", FREEZE, at("2026-06-01T00:00Z"), True, "2026-03-27T00:00Z", None),
    # A deny window wins: the freeze covers 25 and 26 March.
    ("denied", {**OFFICE, **FREEZE}, NOON, False, "2026-03-27T09:00Z", "2026-03-27T17:00Z"),
    ("deny-only", FREEZE, NOON, False, "2026-03-27T00:00Z", "2027-03-25T00:00Z"),
    # Windows that touch merge into one, as far back as the search steps look (64 hours).
    (
        "touching",
        {"windows": [{"cron": "0 * * * *", "duration": "1h"}]},
        NOON,
        True,
        "2026-03-22T20:00Z",
        None,
    ),
]


@pytest.mark.parametrize(
    ("spec", "instant", "is_open", "start", "end"),
    [c[1:] for c in WINDOWS],
    ids=[c[0] for c in WINDOWS],
)
def test_windows(
    spec: dict[str, Any], instant: datetime, is_open: bool, start: str | None, end: str | None
) -> None:
    schedule = compiled(spec)
    assert schedule.is_open(instant) is is_open
    window = schedule.window(instant)
    assert window is not None
    assert window.start == at(start) if start else window.start is None
    if end is None:
        # Open past every search step: the end is as far as was looked, or none.
        assert window.end is None or window.end > instant
    else:
        assert window.end == at(end)


@pytest.mark.parametrize(
    "spec",
    [SATURDAY_BERLIN, {**SATURDAY_BERLIN, **FREEZE}, FREEZE, {}],
    ids=["window", "window-and-deny", "deny-only", "always-open"],
)
def test_an_open_schedule_shows_the_same_status_all_through_its_window(
    spec: dict[str, Any],
) -> None:
    # A status that moved with the clock was written again on every pass, which woke the next.
    schedule = compiled(spec)
    instants = [at(f"2026-11-28T{clock}Z") for clock in ("01:00", "01:24:38.98", "02:59:59")]
    statuses = [schedule_status(schedule, instant) for instant in instants]
    assert statuses[0].open
    assert statuses == [statuses[0]] * len(instants)


def test_a_window_that_never_opens_within_the_horizon_is_none() -> None:
    leap_days = compiled({"windows": [{"cron": "0 3 29 2 *", "duration": "1h"}]})
    assert leap_days.window(NOON) is None
    assert schedule_status(leap_days, NOON).window is None


def test_status_and_next_edge() -> None:
    schedule = compiled(NIGHTLY)
    status = schedule_status(schedule, NOON)
    assert status.open is False
    assert status.window is not None
    assert (status.window.start, status.window.end) == (
        "2026-03-26T02:00:00Z",
        "2026-03-26T05:00:00Z",
    )
    assert next_edge(schedule, NOON) == at("2026-03-26T02:00Z")
    assert next_edge(schedule, at("2026-03-26T03:00Z")) == at("2026-03-26T05:00Z")


def test_both_schedules_must_be_open() -> None:
    both = Schedules((compiled(NIGHTLY), compiled(SATURDAY_BERLIN)))
    assert not both.is_open(at("2026-03-26T02:30Z"))  # nightly, but not Saturday
    assert both.next_open(NOON) == at("2026-03-28T02:00Z")
    assert both.is_open(at("2026-03-28T02:00Z"))


BAD: list[tuple[str, dict[str, Any], str]] = [
    ("bad-zone", {"timeZone": "Mars/Olympus"}, "spec.schedule.timeZone: 'Mars/Olympus' is not"),
    (
        "bad-cron",
        {"windows": [{"cron": "0 25 * * *", "duration": "1h"}]},
        "spec.schedule.windows[0].cron: '0 25 * * *': the hour field '25' is out of range",
    ),
    (
        "zero-duration",
        {"deny": [{"cron": "@daily", "duration": "0s"}]},
        "spec.schedule.deny[0].duration: must be longer than zero",
    ),
]


@pytest.mark.parametrize(("spec", "message"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_invalid_schedules_name_the_field(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        compiled(spec)
    assert str(raised.value).startswith(f"Bundle ws/app: {message}")
