"""Printing objects for people and pipes: multi-document YAML or a JSON List, no YAML aliases."""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

import yaml


class OutputFormat(StrEnum):
    YAML = "yaml"
    JSON = "json"


class _NoAliasDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_NoAliasDumper.add_representer(str, _str_representer)


def to_yaml(obj: Any) -> str:
    return yaml.dump(obj, Dumper=_NoAliasDumper, sort_keys=False, allow_unicode=True, width=100)


def format_objects(objects: Sequence[dict[str, Any]], fmt: OutputFormat) -> str:
    if fmt is OutputFormat.JSON:
        listing = {"apiVersion": "v1", "kind": "List", "items": list(objects)}
        return json.dumps(listing, indent=2, ensure_ascii=False) + "\n"
    return "".join(f"---\n{to_yaml(obj)}" for obj in objects)
