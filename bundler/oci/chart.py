"""Chart.yaml: the metadata of a chart, read and validated before anything is packaged or pushed.

Validation accepts what Helm accepts and refuses what Helm refuses, where packaging and the
registry depend on it: `apiVersion` v2 or v1 (Helm 2's charts, still installed by Helm 3 and 4;
their dependencies are in `requirements.yaml`), a `name` usable as an OCI repository name
(lowercase letters and digits separated by `.`, `_` or `-`), a `version` Helm reads as SemVer (a
leading `v` and missing minor or patch parts included, as Masterminds' semver reads them: `v3.28.2`,
`1.2`), `type` application or library when set, dependencies with a name, none twice (by name or
alias), and string annotations. The whole mapping is kept: it becomes the OCI config blob, as Helm
writes it.

`with_overrides` is `helm package --version/--app-version`: the same metadata with another version
or appVersion, validated again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bundler import yamlload
from bundler.core.versions import is_version, version_to_tag
from bundler.errors import InvalidInputError

CHART_FILE = "Chart.yaml"
# Helm 2's charts (apiVersion v1) list their dependencies in this file, not in Chart.yaml.
REQUIREMENTS_FILE = "requirements.yaml"
API_VERSION_V1 = "v1"
API_VERSION_V2 = "v2"
API_VERSIONS = (API_VERSION_V2, API_VERSION_V1)
CHART_TYPES = ("application", "library")
# OCI tags are at most 128 characters.
MAX_TAG_LENGTH = 128

_NAME = re.compile(r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*")
# Helm's rule for a dependency's alias.
_ALIAS = re.compile(r"[a-zA-Z0-9_-]+")
# Chart.yaml fields Helm reads as lists, maps or booleans: any other type fails `helm pull` later.
_SHAPES: dict[str, tuple[type, str]] = {
    "sources": (list, "a list"),
    "keywords": (list, "a list"),
    "maintainers": (list, "a list"),
    "dependencies": (list, "a list"),
    "annotations": (dict, "a mapping"),
    "deprecated": (bool, "true or false"),
}
_VERSION_FORM = "[v]MAJOR[.MINOR[.PATCH]][-PRERELEASE][+BUILD]"


@dataclass(frozen=True)
class Dependency:
    """One entry of a chart's dependencies: the subchart it needs in charts/."""

    name: str
    alias: str | None = None


@dataclass(frozen=True)
class ChartMetadata:
    """A validated Chart.yaml: the fields bundler needs, and the document as written."""

    name: str
    version: str
    document: Mapping[str, Any]

    @property
    def api_version(self) -> str:
        return str(self.document["apiVersion"])

    @property
    def description(self) -> str | None:
        return self._text("description")

    @property
    def home(self) -> str | None:
        return self._text("home")

    @property
    def first_source(self) -> str | None:
        sources = self.document.get("sources") or []
        return sources[0] if sources and isinstance(sources[0], str) and sources[0] else None

    @property
    def authors(self) -> str | None:
        """The maintainers as Helm writes them into `org.opencontainers.image.authors`:
        `Name (email), Name`."""
        people = []
        for maintainer in self.document.get("maintainers") or []:
            if not isinstance(maintainer, Mapping):
                continue
            name, email = maintainer.get("name") or "", maintainer.get("email") or ""
            people.append(f"{name} ({email})" if email else str(name))
        text = ", ".join(people)
        return text or None

    @property
    def annotations(self) -> dict[str, str]:
        return dict(self.document.get("annotations") or {})

    @property
    def dependencies(self) -> list[Dependency]:
        """The Chart.yaml's dependencies (a v1 chart's are in requirements.yaml: see
        `dependencies_of`)."""
        return dependencies_of(self.document.get("dependencies") or [], source="")

    def _text(self, key: str) -> str | None:
        value = self.document.get(key)
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


def check_version(version: str, *, source: str, field: str = "version") -> None:
    """InvalidInputError unless Helm reads `version` as a chart version that fits in a tag."""
    if not is_version(version):
        raise InvalidInputError(
            f"{version!r} is not a SemVer version ({_VERSION_FORM})", obj=source, field=field
        )
    if len(version_to_tag(version)) > MAX_TAG_LENGTH:
        raise InvalidInputError(
            f"is longer than {MAX_TAG_LENGTH} characters, the most an OCI tag holds",
            obj=source,
            field=field,
        )


def dependencies_of(
    raw: Sequence[Any], *, source: str, field: str = "dependencies"
) -> list[Dependency]:
    """The dependencies listed in `raw` (Chart.yaml's or requirements.yaml's `dependencies`):
    each a mapping with a name; a name or alias used twice is refused, as Helm refuses it."""
    found: list[Dependency] = []
    used: set[str] = set()
    for index, entry in enumerate(raw):
        where = f"{field}[{index}]"
        if not isinstance(entry, Mapping):
            raise InvalidInputError("must be a mapping", obj=source, field=where)
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidInputError("is required", obj=source, field=f"{where}.name")
        alias = entry.get("alias")
        if alias is not None and (not isinstance(alias, str) or not _ALIAS.fullmatch(alias)):
            raise InvalidInputError(
                "must be letters, digits, '_' and '-' (Helm's rule)",
                obj=source,
                field=f"{where}.alias",
            )
        key = alias or name
        if key in used:
            raise InvalidInputError(
                f"more than one dependency with name or alias {key!r}", obj=source, field=where
            )
        used.add(key)
        found.append(Dependency(name=name, alias=alias))
    return found


def validate(document: Any, *, source: str) -> ChartMetadata:
    """Check a parsed Chart.yaml; `source` names the file in error messages."""
    if not isinstance(document, dict):
        raise InvalidInputError("must be a YAML mapping", obj=source)
    api_version = _required_string(document, "apiVersion", source)
    if api_version not in API_VERSIONS:
        raise InvalidInputError(
            f"must be {API_VERSION_V2!r} (Helm 3 charts) or {API_VERSION_V1!r} (Helm 2 charts), "
            f"got {api_version!r}",
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
    check_version(version, source=source)
    for key, (kind, expected) in _SHAPES.items():
        if key in document and not isinstance(document[key], kind):
            raise InvalidInputError(f"must be {expected}", obj=source, field=key)
    for key, value in (document.get("annotations") or {}).items():
        if not isinstance(value, str):
            raise InvalidInputError(
                "must be a string (quote it): Helm reads annotations as text",
                obj=source,
                field=f"annotations.{key}",
            )
    app_version = document.get("appVersion")
    if app_version is not None and not isinstance(app_version, str):
        raise InvalidInputError(
            f"must be a string, got {type(app_version).__name__} {app_version!r} (quote it)",
            obj=source,
            field="appVersion",
        )
    chart_type = document.get("type", "application")
    if chart_type not in CHART_TYPES:
        raise InvalidInputError(
            f"must be one of {', '.join(CHART_TYPES)}, got {chart_type!r}", obj=source, field="type"
        )
    dependencies_of(document.get("dependencies") or [], source=source)
    return ChartMetadata(name=name, version=version, document=document)


def parse(text: str | bytes, *, source: str) -> ChartMetadata:
    """Parse and validate the text of a Chart.yaml."""
    return validate(yamlload.load(text, source), source=source)


@dataclass(frozen=True)
class Overrides:
    """`--version` and `--app-version`, as `helm package` takes them."""

    version: str | None = None
    app_version: str | None = None

    def __bool__(self) -> bool:
        return self.version is not None or self.app_version is not None


def with_overrides(metadata: ChartMetadata, overrides: Overrides, *, source: str) -> ChartMetadata:
    """`metadata` with the version and appVersion `overrides` sets, validated again."""
    document = dict(metadata.document)
    if overrides.version is not None:
        check_version(overrides.version, source=source, field="--version")
        document["version"] = overrides.version
    if overrides.app_version is not None:
        if not overrides.app_version:
            raise InvalidInputError("must not be empty", obj=source, field="--app-version")
        document["appVersion"] = overrides.app_version
    return validate(document, source=source)
