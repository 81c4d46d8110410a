"""Flux/Go duration text (`10m`, `1h30m`, `500ms`) as seconds: pollInterval, progressDeadline."""

from __future__ import annotations

import re
from datetime import timedelta

_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration_seconds(text: str) -> float:
    """Flux/Go duration text (`10m`, `1h30m`, `500ms`) in seconds."""
    return sum(float(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION_PART.findall(text))


def parse_duration(text: str) -> timedelta:
    """Flux/Go duration text as a timedelta."""
    return timedelta(seconds=duration_seconds(text))
