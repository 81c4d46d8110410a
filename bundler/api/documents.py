"""Parsing YAML documents into API objects, with errors that point at `SOURCE:LINE: field`.

LINE is the line of the offending field where the document writes it (or of its closest written
parent), else the document's first line, as compilers point at lines.

Pure: text in, models out. Reading files is the caller's job (bundler.inputs).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from bundler import yamlload
from bundler.api.bootstrap import BootstrapConfig
from bundler.api.bundle import Bundle
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.meta import API_VERSION
from bundler.errors import InvalidInputError

DEFAULT_NAMESPACE = "default"

KINDS: dict[str, type[BaseModel]] = {
    "Bundle": Bundle,
    "Cluster": Cluster,
    "ClusterGroup": ClusterGroup,
    "BootstrapConfig": BootstrapConfig,
}


@dataclass(frozen=True)
class Document:
    """One YAML document of an input file, where it came from and what it holds."""

    source: str
    index: int
    body: dict[str, Any]
    line: int = 1  # where the document starts
    lines: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)

    @property
    def where(self) -> str:
        """`SOURCE:LINE` of the document's first line."""
        return f"{self.source}:{self.line}"

    def at(self, path: str | None) -> str:
        """`SOURCE:LINE` of the field `path` (or its closest written parent)."""
        located = yamlload.LocatedDocument(self.body, self.line, self.lines)
        return f"{self.source}:{located.line_of(path)}"

    def error(self, err: InvalidInputError) -> InvalidInputError:
        """`err` (about this document's `err.field`) pointing at the field's line."""
        return InvalidInputError(err.message, obj=self.at(err.field), field=err.field)


def split_documents(text: str, source: str, skipped: list[str] | None = None) -> list[Document]:
    """The non-empty documents of a multi-document YAML text; bad YAML names the line. A document
    that is not a mapping (a list, a scalar) is an error, or, when `skipped` is given, a notice
    line appended to it."""
    docs = []
    for index, located in enumerate(yamlload.load_all(text, source)):
        body = located.body
        if body is None:
            continue
        if not isinstance(body, dict):
            where = f"{source}:{located.line}"
            if skipped is not None:
                skipped.append(
                    f"notice: {where}: skipped {yaml_type(body)}: not a Kubernetes object"
                )
                continue
            raise InvalidInputError(
                f"expected a mapping (a Kubernetes object), got {yaml_type(body)}", obj=where
            )
        doc = Document(source, index, body, located.line, located.lines)
        _check_type_fields(doc)
        docs.append(doc)
    return docs


def _check_type_fields(doc: Document) -> None:
    """`apiVersion` and `kind` are strings where a document writes them: `kind: [Bundle]` is an
    input error naming the field, not something every later reader must survive."""
    for name in ("apiVersion", "kind"):
        value = doc.body.get(name)
        if value is not None and not isinstance(value, str):
            raise InvalidInputError(
                f"must be a string, got {yaml_type(value)}", obj=doc.at(name), field=name
            )


def field_path(loc: tuple[int | str, ...]) -> str:
    """pydantic's error location as a field path: spec.targets[0].clusterSelector."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path


# pydantic's wording for a value of the wrong type, in the words of the YAML it came from.
_EXPECTED = {
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "list_type": "a list",
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
}


def describe_validation_error(err: ValidationError) -> tuple[str, str]:
    """The first error of a pydantic ValidationError as (field path, message)."""
    first = err.errors()[0]
    loc = tuple(p for p in first["loc"] if not _is_union_tag(p))
    if first["type"] == "extra_forbidden":
        return field_path(loc), "unknown field"
    if first["type"] == "missing":
        return field_path(loc), "required field is missing"
    if first["loc"][-1:] == ("[key]",):
        key = json.dumps(first["input"]) if not isinstance(first["input"], str) else "?"
        return field_path(loc[:-1]), f"key {key} must be a string (quote it)"
    if first["type"] == "enum":
        choices = str(first["ctx"]["expected"]).replace("'", "").replace(" or ", ", ")
        return field_path(loc), f"{json.dumps(first['input'])} is not one of {choices}"
    expected = _EXPECTED.get(first["type"])
    if expected is not None and len(loc) == len(first["loc"]):
        return field_path(loc), _wrong_type(expected, first["input"])
    return field_path(loc), str(first["msg"])


def _wrong_type(expected: str, value: Any) -> str:
    message = f"must be {expected}, got {yaml_type(value)}"
    if expected == "a string" and isinstance(value, bool | int | float):
        message += " (quote it)"
    return message


def yaml_type(value: Any) -> str:
    """What a parsed YAML value is, in YAML's words: null, a boolean, a number, ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__


def _is_union_tag(part: int | str) -> bool:
    # pydantic puts the tried union member (e.g. "int", "str", "constrained-str") into locations.
    return isinstance(part, str) and (part in ("int", "str", "bool") or "[" in part or "-" in part)


def is_bundler_document(body: Mapping[str, Any]) -> bool:
    """A document bundler owns: one of its kinds, or anything of its API group (a typo in a kind
    of ours is an error, not a document of someone else's to skip)."""
    api_version = body.get("apiVersion")
    group = api_version.partition("/")[0] if isinstance(api_version, str) else ""
    return body.get("kind") in KINDS or group == API_VERSION.partition("/")[0]


def describe_kind(body: Mapping[str, Any]) -> str:
    """`Deployment apps/v1 web` or `a document without kind` (a fleet.yaml), for notices."""
    kind, api_version = body.get("kind"), body.get("apiVersion")
    if not isinstance(kind, str) or not kind:
        return "a document without kind (not a Kubernetes object)"
    metadata = body.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return " ".join(str(part) for part in (kind, api_version, name) if part)


def parse_object(doc: Document) -> BaseModel:
    """The API object a document holds; unknown kinds and invalid fields name the document."""
    api_version = doc.body.get("apiVersion")
    kind = doc.body.get("kind")
    model = KINDS.get(kind) if isinstance(kind, str) else None
    if model is None:
        expected = ", ".join(KINDS)
        raise InvalidInputError(
            f"unsupported kind {kind!r} (expected {expected})", obj=doc.at("kind"), field="kind"
        )
    if api_version != API_VERSION:
        raise InvalidInputError(
            f"unsupported apiVersion {api_version!r} (expected {API_VERSION})",
            obj=doc.at("apiVersion"),
            field="apiVersion",
        )
    body = _with_default_namespace(doc.body)
    try:
        return model.model_validate(body)
    except ValidationError as err:
        path, message = describe_validation_error(err)
        raise InvalidInputError(message, obj=doc.at(path), field=path) from None


def _with_default_namespace(body: Mapping[str, Any]) -> dict[str, Any]:
    metadata = body.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("namespace"):
        return dict(body)
    return {**body, "metadata": {**metadata, "namespace": DEFAULT_NAMESPACE}}
