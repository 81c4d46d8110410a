"""The limits a real cluster with default settings puts on what it stores, with its own answers.

- A request body over 3 MiB (create, update, patch, delete): 413 `Request entity too large: limit
  is 3145728` (kube-apiserver's MaxRequestBodyBytes, twice etcd's limit to allow for JSON's
  overhead), once that much and one byte more was read (bundler.apiserver.bodies).
- An object over etcd's default `--max-request-bytes` of 1.5 MiB: etcd refuses it, and
  kube-apiserver passes etcd's error on as it does any error that is not a Status: 500 with no
  reason and the message `etcdserver: request is too large` (kubernetes/kubernetes#112152). The
  object is measured as compact JSON (what custom resources are stored as).
- `metadata.name`: a DNS-1123 label for Namespaces, a path segment for RBAC kinds, a DNS-1123
  subdomain otherwise; label keys are qualified names, label values at most 63 bytes of
  `[A-Za-z0-9._-]`; annotation keys are qualified names and all annotations together at most
  256 KiB. A violation is 422 Invalid with apimachinery's field paths and messages, e.g.
  `Bundle.bundler.dev "Bad" is invalid: metadata.name: Invalid value: "Bad": a lowercase RFC
  1123 subdomain must consist of ...`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from bundler.api.resources import NAMESPACE, Resource
from bundler.apiserver.field_errors import (
    FieldError,
    invalid,
    invalid_value,
    required,
    too_long,
)
from bundler.apiserver.statuses import HttpError
from bundler.core.rbac import RBAC_GROUP
from bundler.store.protocol import Obj

MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
ETCD_MAX_REQUEST_BYTES = 1536 * 1024
TOTAL_ANNOTATION_SIZE = 256 * 1024
LABEL_VALUE_MAX = 63
QUALIFIED_NAME_MAX = 63
DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_QUALIFIED_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QUALIFIED_FMT + ")?"
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
_QUALIFIED_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character"
)


def request_entity_too_large(limit: int = MAX_REQUEST_BODY_BYTES) -> HttpError:
    return HttpError(
        413,
        f"Request entity too large: limit is {limit}",
        reason="RequestEntityTooLarge",
    )


def check_stored_size(obj: Obj) -> None:
    if len(json.dumps(obj, separators=(",", ":")).encode()) > ETCD_MAX_REQUEST_BYTES:
        raise HttpError(500, "etcdserver: request is too large", reason="")


def check_metadata(res: Resource, obj: Obj, creating: bool) -> None:
    """422 Invalid when the object's name (on create), labels or annotations break the rules."""
    errors = metadata_errors(res, obj, creating)
    if errors:
        raise invalid(res.kind, res.group, object_name(obj), errors)


def metadata_errors(res: Resource, obj: Obj, creating: bool) -> list[FieldError]:
    """What is wrong with the object's name (on create), labels and annotations."""
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return []
    errors: list[FieldError] = []
    name = meta.get("name")
    if creating and isinstance(name, str):
        errors.extend(_name_errors(res, name))
    errors.extend(_label_errors(meta.get("labels")))
    errors.extend(_annotation_errors(meta.get("annotations")))
    return errors


def object_name(obj: Obj) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else ""


def _name_errors(res: Resource, name: str) -> list[FieldError]:
    if not name:
        return [required("metadata.name", "name or generateName is required")]
    if res == NAMESPACE:
        # A name that would be a subdomain but for its dots gets a message of its own.
        dotted = "." in name and not dns1123_subdomain(name)
        messages = ["must not contain dots"] if dotted else dns1123_label(name)
    elif res.group == RBAC_GROUP:
        messages = path_segment(name)
    else:
        messages = dns1123_subdomain(name)
    return [invalid_value("metadata.name", name, m) for m in messages]


def _label_errors(labels: Any) -> list[FieldError]:
    if not isinstance(labels, Mapping):
        return []
    errors: list[FieldError] = []
    for key in sorted(labels):
        errors.extend(invalid_value("metadata.labels", key, m) for m in qualified_name(key))
        value = labels[key]
        if isinstance(value, str):
            errors.extend(invalid_value("metadata.labels", value, m) for m in label_value(value))
    return errors


def _annotation_errors(annotations: Any) -> list[FieldError]:
    if not isinstance(annotations, Mapping):
        return []
    errors = [
        invalid_value("metadata.annotations", key, m)
        for key in sorted(annotations)
        for m in qualified_name(key.lower())
    ]
    size = sum(len(k) + len(v) for k, v in annotations.items() if isinstance(v, str))
    if size > TOTAL_ANNOTATION_SIZE:
        errors.append(too_long("metadata.annotations", TOTAL_ANNOTATION_SIZE))
    return errors


def dns1123_label(value: str) -> list[str]:
    errors = [_max_len(DNS1123_LABEL_MAX)] if len(value) > DNS1123_LABEL_MAX else []
    if not _matches(_LABEL_FMT, value):
        errors.append(_regex_error(_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return errors


def dns1123_subdomain(value: str) -> list[str]:
    errors = [_max_len(DNS1123_SUBDOMAIN_MAX)] if len(value) > DNS1123_SUBDOMAIN_MAX else []
    if not _matches(_SUBDOMAIN_FMT, value):
        errors.append(_regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errors


def path_segment(value: str) -> list[str]:
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def qualified_name(value: str) -> list[str]:
    parts = value.split("/")
    errors: list[str] = []
    if len(parts) > 2:
        return [
            "a qualified name "
            + _regex_error(_QUALIFIED_MSG, _QUALIFIED_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend(f"prefix part {m}" for m in dns1123_subdomain(prefix))
    name = parts[-1]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name.encode()) > QUALIFIED_NAME_MAX:
        errors.append(f"name part {_max_bytes(QUALIFIED_NAME_MAX)}")
    if not _matches(_QUALIFIED_FMT, name):
        errors.append(
            "name part "
            + _regex_error(_QUALIFIED_MSG, _QUALIFIED_FMT, "MyName", "my.name", "123-abc")
        )
    return errors


def label_value(value: str) -> list[str]:
    errors = [_max_bytes(LABEL_VALUE_MAX)] if len(value.encode()) > LABEL_VALUE_MAX else []
    if not _matches(_LABEL_VALUE_FMT, value):
        errors.append(
            _regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
        )
    return errors


def _matches(fmt: str, value: str) -> bool:
    return re.fullmatch(fmt, value, flags=re.ASCII) is not None


def _max_len(limit: int) -> str:
    return f"must be no more than {limit} characters"


def _max_bytes(limit: int) -> str:
    """What kube-apiserver says of a label value or a label key's name part too long."""
    return f"must be no more than {limit} bytes"


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    """apimachinery's RegexError, whose spacing between examples kubectl users know well."""
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"
