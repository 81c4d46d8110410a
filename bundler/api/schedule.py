"""Maintenance windows: when the manager may change what runs on a cluster (spec.schedule of a
Bundle and of a Cluster), and the window a status shows."""

from __future__ import annotations

from pydantic import Field

from bundler.api.base import ApiModel
from bundler.api.meta import Duration

# Bounds that keep one schedule cheap to evaluate on every pass.
SCHEDULE_WINDOWS_MAX = 16
CRON_TEXT_MAX = 256


class ScheduleWindow(ApiModel):
    """A recurring stretch of time: it starts at each time `cron` names (in the schedule's time
    zone) and lasts `duration`."""

    cron: str = Field(min_length=1, max_length=CRON_TEXT_MAX)
    """When the window starts, as the five fields of a crontab line (minute, hour, day of month,
    month, day of week; numbers, names such as MON or JAN, `*`, ranges `1-5`, steps `*/15`,
    lists `1,15`), or @hourly, @daily, @weekly, @monthly, @yearly. As in cron, when both day
    fields are restricted a day matching either counts."""
    duration: Duration
    """How long the window lasts from each start (a Go duration: 4h, 90m)."""


class Schedule(ApiModel):
    """Maintenance windows: outside them the manager promotes and creates nothing new on the
    cluster (and a deleted Bundle's releases stay until a window opens), so changes land only
    when they are allowed. A Bundle's schedule applies on each of its clusters, a Cluster's to
    every Bundle on it; both must allow. Deny windows win over windows."""

    timeZone: str | None = None
    """The IANA time zone the cron times are read in (Europe/Berlin, America/New_York). Default
    UTC."""
    windows: list[ScheduleWindow] = Field(default_factory=list, max_length=SCHEDULE_WINDOWS_MAX)
    """When changes are allowed: inside any of these windows, and never outside them. Empty:
    at any time not denied."""
    deny: list[ScheduleWindow] = Field(default_factory=list, max_length=SCHEDULE_WINDOWS_MAX)
    """When changes are never made, even inside a window (a release freeze, a holiday)."""


class TimeWindow(ApiModel):
    """A stretch of time (RFC 3339, UTC)."""

    start: str
    """When it begins."""
    end: str | None = None
    """When it ends; unset: no end found within the year ahead."""


class ScheduleStatus(ApiModel):
    """The state of the object's own spec.schedule, written by the manager."""

    open: bool
    """Whether changes are allowed now."""
    window: TimeWindow | None = None
    """The window in effect now (open), else the next one; unset when none opens within the
    year ahead."""
    message: str = ""
    """Why the schedule cannot be used, when it cannot (the Ready condition says so too)."""
