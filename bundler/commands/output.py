"""Printing objects for people and pipes: multi-document YAML or a JSON List, no YAML aliases."""

from __future__ import annotations

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
