"""Printing objects for people and pipes: multi-document YAML or a JSON List, no YAML aliases."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from bundler import yamldump


class OutputFormat(StrEnum):
    YAML = "yaml"
    JSON = "json"


def to_yaml(obj: Any) -> str:
    return yamldump.dump(obj)


def format_objects(objects: Sequence[dict[str, Any]], fmt: OutputFormat) -> str:
    if fmt is OutputFormat.JSON:
        listing = {"apiVersion": "v1", "kind": "List", "items": list(objects)}
        return json.dumps(listing, indent=2, ensure_ascii=False) + "\n"
    return "".join(f"---\n{to_yaml(obj)}" for obj in objects)


def add_output_argument(parser: argparse.ArgumentParser, *, default: OutputFormat | None) -> None:
    """`-o/--output yaml|json`, the one output flag of render, explain and sim (unset: text)."""
    shown = "text" if default is None else default.value
    parser.add_argument(
        "-o",
        "--output",
        type=OutputFormat,
        choices=list(OutputFormat),
        default=default,
        help=f"print yaml or json (JSON keys camelCase, as in the API; default {shown})",
    )


def format_data(data: Any, fmt: OutputFormat) -> str:
    """One structured document (a report, an explanation) as YAML or indented JSON."""
    if fmt is OutputFormat.JSON:
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return to_yaml(data)
