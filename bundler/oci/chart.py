"""Chart.yaml: the metadata of a chart, read and validated before anything is packaged or pushed.

Validation covers what packaging and the registry depend on: `apiVersion: v2`, a `name` usable as
an OCI repository name (lowercase letters and digits separated by `.`, `_` or `-`), a strict
SemVer 2 `version` (no `v` prefix, no missing parts), and `type` application or library when set.
The whole mapping is kept: it becomes the OCI config blob, as Helm writes it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bundler import yamlload
from bundler.core.versions import is_exact_version
from bundler.errors import InvalidInputError

CHART_FILE = "Chart.yaml"
API_VERSION = "v2"
CHART_TYPES = ("application", "library")

_NAME = re.compile(r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*")
# Chart.yaml fields Helm reads as lists, maps or booleans: any other type fails `helm pull` later.
_SHAPES: dict[str, tuple[type, str]] = {
    "sources": (list, "a list"),
    "keywords": (list, "a list"),
    "maintainers": (list, "a list"),
    "dependencies": (list, "a list"),
    "annotations": (dict, "a mapping"),
    "deprecated": (bool, "true or false"),
}


@dataclass(frozen=True)
class ChartMetadata:
    """A validated Chart.yaml: the fields bundler needs, and the document as written."""

    name: str
    version: str
    document: Mapping[str, Any]

    @property
    def description(self) -> str | None:
        value = self.document.get("description")
        return value if isinstance(value, str) and value else None

    def config_json(self) -> bytes:
        """The OCI config blob: the metadata as compact JSON with sorted keys (deterministic)."""
        return json.dumps(
            self.document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
        ).encode()


def _required_string(document: Mapping[str, Any], key: str, source: str) -> str:
    value = document.get(key)
    if value is None or value == "":
        raise InvalidInputError("is required", obj=source, field=key)
    if not isinstance(value, str):
        # YAML reads `version: 1.0` as a float; Helm needs the text, so ask for quotes.
        raise InvalidInputError(
            f"must be a string, got {type(value).__name__} {value!r} (quote it)",
            obj=source,
            field=key,
        )
    return value


def validate(document: Any, *, source: str) -> ChartMetadata:
    """Check a parsed Chart.yaml; `source` names the file in error messages."""
    if not isinstance(document, dict):
        raise InvalidInputError("must be a YAML mapping", obj=source)
    api_version = _required_string(document, "apiVersion", source)
    if api_version != API_VERSION:
        raise InvalidInputError(
            f"must be {API_VERSION!r} (Helm 3 charts), got {api_version!r}",
            obj=source,
            field="apiVersion",
        )
    name = _required_string(document, "name", source)
    if not _NAME.fullmatch(name):
        raise InvalidInputError(
            f"{name!r} is not a valid chart name: lowercase letters and digits, separated by "
            "'.', '_' or '-' (it becomes an OCI repository name)",
            obj=source,
            field="name",
        )
    version = _required_string(document, "version", source)
    if version.startswith("v") or not is_exact_version(version):
        raise InvalidInputError(
            f"{version!r} is not a SemVer 2 version (MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD])",
            obj=source,
            field="version",
        )
    for key, (kind, expected) in _SHAPES.items():
        if key in document and not isinstance(document[key], kind):
            raise InvalidInputError(f"must be {expected}", obj=source, field=key)
    chart_type = document.get("type", "application")
    if chart_type not in CHART_TYPES:
        raise InvalidInputError(
            f"must be one of {', '.join(CHART_TYPES)}, got {chart_type!r}", obj=source, field="type"
        )
    return ChartMetadata(name=name, version=version, document=document)


def parse(text: str | bytes, *, source: str) -> ChartMetadata:
    """Parse and validate the text of a Chart.yaml."""
    return validate(yamlload.load(text, source), source=source)
