"""Log lines: JSON objects (time, level, logger, msg, the object) or text ending with the object."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from bundler.observe.logs import JsonFormatter, LogFormat, TextFormatter, about, formatter


def record(message: str = "reconciled %s", *args: object) -> logging.LogRecord:
    return logging.LogRecord("bundler.test", logging.INFO, __file__, 1, message, args, None)


def test_json_lines_carry_the_object_of_the_enclosing_reconcile() -> None:
    with about(controller="bundle", kind="Bundle", namespace="ws", name="app"):
        line = JsonFormatter().format(record("reconciled %s", "ws/app"))
    parsed = json.loads(line)
    assert parsed.pop("time").endswith("+00:00")
    assert parsed == {
        "level": "info",
        "logger": "bundler.test",
        "msg": "reconciled ws/app",
        "controller": "bundle",
        "kind": "Bundle",
        "namespace": "ws",
        "name": "app",
    }
    assert "\n" not in line


def test_outside_a_reconcile_a_line_names_no_object() -> None:
    parsed = json.loads(JsonFormatter().format(record("started")))
    assert set(parsed) == {"time", "level", "logger", "msg"}


def test_nested_contexts_add_to_each_other_and_unwind() -> None:
    with about(controller="agent"), about(namespace="ns", name="bd"):
        inner = json.loads(JsonFormatter().format(record()))
    outer = json.loads(JsonFormatter().format(record()))
    assert (inner["controller"], inner["name"]) == ("agent", "bd")
    assert "controller" not in outer


def test_an_exception_goes_into_the_error_field_on_the_same_line() -> None:
    failing = record("failed")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        failing.exc_info = sys.exc_info()
    line = JsonFormatter().format(failing)
    assert line.count("\n") == 0
    assert "RuntimeError: boom" in json.loads(line)["error"]


def test_text_lines_end_with_the_object() -> None:
    with about(controller="cluster", kind="Cluster", namespace="ws", name="a"):
        line = TextFormatter().format(record("offline"))
    assert line.endswith(
        "INFO bundler.test: offline controller=cluster kind=Cluster namespace=ws name=a"
    )


@pytest.mark.parametrize(
    ("log_format", "kind"),
    [(LogFormat.JSON, JsonFormatter), (LogFormat.TEXT, TextFormatter)],
    ids=["json", "text"],
)
def test_formatter_per_format(log_format: LogFormat, kind: type[logging.Formatter]) -> None:
    assert isinstance(formatter(log_format), kind)
