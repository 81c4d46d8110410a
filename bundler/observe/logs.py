"""Log lines as operators read them: `text` for a terminal, `json` (one object per line) for a log
pipeline, each naming the object it is about.

Whatever a reconcile logs is about the object it reconciles: the runtime wraps every reconcile in
`about(controller=..., kind=..., namespace=..., name=...)`, and the formatters add those fields to
every line logged inside it, on that thread, by whichever module logs. Lines carry only what the
code put into its messages and these names: never object contents, so never a Secret's value.
"""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from enum import StrEnum

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# Pairs rather than a dict: a ContextVar's default is shared by every context, so it must be frozen.
_about: contextvars.ContextVar[tuple[tuple[str, str], ...]] = contextvars.ContextVar(
    "about", default=()
)


class LogFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


@contextmanager
def about(**fields: str) -> Iterator[None]:
    """Lines logged inside the block (on this thread) name these fields; empty ones are left out."""
    merged = {**dict(_about.get()), **{k: v for k, v in fields.items() if v}}
    token = _about.set(tuple(merged.items()))
    try:
        yield
    finally:
        _about.reset(token)


def object_fields() -> dict[str, str]:
    """The object the current thread's lines are about (empty outside any `about()`)."""
    return dict(_about.get())


class JsonFormatter(logging.Formatter):
    """`{"time", "level", "logger", "msg", ...object fields, "error"?}` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, str] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
            **object_fields(),
        }
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """The classic line, followed by `key=value` for the object it is about."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        line = super().formatMessage(record)
        fields = object_fields()
        if not fields:
            return line
        return line + " " + " ".join(f"{k}={v}" for k, v in fields.items())


def formatter(log_format: LogFormat) -> logging.Formatter:
    return JsonFormatter() if log_format is LogFormat.JSON else TextFormatter()


def configure_logging(log_format: LogFormat, level: int = logging.INFO) -> None:
    """INFO lines on stderr in `log_format`, unless the embedder configured logging already."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(formatter(log_format))
    root.addHandler(handler)
    root.setLevel(level)
