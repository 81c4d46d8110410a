"""Kubernetes label selectors: evaluation, validation and string form, as Kubernetes does them.

A selector is matchLabels AND every matchExpression; the empty selector `{}` matches every object.
`NotIn` and `DoesNotExist` match objects that lack the key. Validation follows apimachinery's
ValidateLabelSelector: keys are qualified names, values are label values, In/NotIn need values and
Exists/DoesNotExist take none.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bundler.api.selector import LabelSelector, LabelSelectorRequirement, SelectorOperator
from bundler.core.naming import DNS1123_LABEL_MAX, is_dns1123_subdomain
from bundler.errors import InvalidInputError

_NAME_RE = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_NAME_CHARSET = (
    "alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character"
)
_SETS_OPERATORS = frozenset({SelectorOperator.IN, SelectorOperator.NOT_IN})


def labels_match(required: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """Every required label is present with the same value (equality-based selection)."""
    return all(k in labels and labels[k] == v for k, v in required.items())


def selector_matches(selector: LabelSelector, labels: Mapping[str, str]) -> bool:
    """matchLabels AND all matchExpressions; the empty selector matches everything."""
    return labels_match(selector.matchLabels, labels) and all(
        _requirement_matches(r, labels) for r in selector.matchExpressions
    )


def _requirement_matches(req: LabelSelectorRequirement, labels: Mapping[str, str]) -> bool:
    match req.operator:
        case SelectorOperator.IN:
            return req.key in labels and labels[req.key] in req.values
        case SelectorOperator.NOT_IN:
            return req.key not in labels or labels[req.key] not in req.values
        case SelectorOperator.EXISTS:
            return req.key in labels
        case SelectorOperator.DOES_NOT_EXIST:
            return req.key not in labels


def selector_to_string(selector: LabelSelector) -> str:
    """Kubernetes' string form (`a=b,c in (x,y),!d`): requirements by key, set values sorted.

    The empty selector gives "", which Kubernetes reads as "everything".
    """
    parts = [(k, f"{k}={v}") for k, v in selector.matchLabels.items()]
    parts += [(r.key, _requirement_to_string(r)) for r in selector.matchExpressions]
    return ",".join(text for _, text in sorted(parts, key=lambda p: p[0]))


def _requirement_to_string(req: LabelSelectorRequirement) -> str:
    match req.operator:
        case SelectorOperator.IN:
            return f"{req.key} in ({','.join(sorted(set(req.values)))})"
        case SelectorOperator.NOT_IN:
            return f"{req.key} notin ({','.join(sorted(set(req.values)))})"
        case SelectorOperator.EXISTS:
            return req.key
        case SelectorOperator.DOES_NOT_EXIST:
            return f"!{req.key}"


def validate_selector(selector: LabelSelector, *, field: str) -> None:
    """Raise InvalidInputError, naming the path under `field`, where Kubernetes would reject it."""
    for key, value in selector.matchLabels.items():
        path = f"{field}.matchLabels"
        _check_label_key(key, field=path)
        _check_label_value(value, f"value of label {key!r}", field=path)
    for i, req in enumerate(selector.matchExpressions):
        _validate_requirement(req, field=f"{field}.matchExpressions[{i}]")


def validate_labels(labels: Mapping[str, str], *, field: str) -> None:
    """Raise InvalidInputError, naming `field`, for a label Kubernetes would refuse to store."""
    for key, value in labels.items():
        _check_label_key(key, field=field)
        _check_label_value(value, f"value of label {key!r}", field=field)


def validate_annotation_keys(annotations: Mapping[str, str], *, field: str) -> None:
    """Annotation keys are qualified names, as label keys are; their values are free text."""
    for key in annotations:
        _check_label_key(key, field=field, what="annotation key")


def _validate_requirement(req: LabelSelectorRequirement, *, field: str) -> None:
    if req.operator in _SETS_OPERATORS and not req.values:
        raise InvalidInputError(
            f"must be specified when operator is {req.operator.value}", field=f"{field}.values"
        )
    if req.operator not in _SETS_OPERATORS and req.values:
        raise InvalidInputError(
            f"may not be specified when operator is {req.operator.value}", field=f"{field}.values"
        )
    _check_label_key(req.key, field=f"{field}.key")
    for j, value in enumerate(req.values):
        _check_label_value(value, "label value", field=f"{field}.values[{j}]")


def _check_label_key(key: str, *, field: str, what: str = "label key") -> None:
    """A qualified name: an optional DNS-1123 subdomain prefix and '/', then a name of <= 63."""
    if key.count("/") > 1:
        raise InvalidInputError(f"{what} {key!r}: at most one '/' is allowed", field=field)
    prefix, slash, name = key.rpartition("/")
    if slash and not is_dns1123_subdomain(prefix):
        raise InvalidInputError(
            f"{what} {key!r}: prefix {prefix!r} must be a DNS-1123 subdomain "
            "(lowercase alphanumerics, '-' and '.', at most 253 characters)",
            field=field,
        )
    if not name:
        raise InvalidInputError(f"{what} {key!r}: name part must not be empty", field=field)
    if len(name) > DNS1123_LABEL_MAX:
        raise InvalidInputError(
            f"{what} {key!r}: name part must be at most {DNS1123_LABEL_MAX} characters",
            field=field,
        )
    if not _NAME_RE.fullmatch(name):
        raise InvalidInputError(
            f"{what} {key!r}: name part must consist of {_NAME_CHARSET}", field=field
        )


def _check_label_value(value: str, what: str, *, field: str) -> None:
    """At most 63 characters of the name charset; the empty value is allowed."""
    if len(value) > DNS1123_LABEL_MAX:
        raise InvalidInputError(
            f"{what} {value!r} must be at most {DNS1123_LABEL_MAX} characters", field=field
        )
    if value and not _NAME_RE.fullmatch(value):
        raise InvalidInputError(
            f"{what} {value!r} must be empty or consist of {_NAME_CHARSET}", field=field
        )
