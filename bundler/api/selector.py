"""Kubernetes label selectors as API models (metav1.LabelSelector), evaluated by core.selectors."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from bundler.api.base import ApiModel


class SelectorOperator(StrEnum):
    IN = "In"
    NOT_IN = "NotIn"
    EXISTS = "Exists"
    DOES_NOT_EXIST = "DoesNotExist"


class LabelSelectorRequirement(ApiModel):
    """One requirement on a label (metav1.LabelSelectorRequirement)."""

    key: str
    """The label key (a qualified name, optionally prefixed: example.com/tier)."""
    operator: SelectorOperator
    """In, NotIn, Exists or DoesNotExist. NotIn and DoesNotExist also match objects without the
    label."""
    values: list[str] = Field(default_factory=list)
    """The label values: at least one for In and NotIn, none for Exists and DoesNotExist."""


class LabelSelector(ApiModel):
    """A Kubernetes label selector (metav1.LabelSelector): matchLabels AND every
    matchExpression; `{}` matches everything."""

    matchLabels: dict[str, str] = Field(default_factory=dict)
    """Labels that must all be present with exactly these values."""
    matchExpressions: list[LabelSelectorRequirement] = Field(default_factory=list)
    """Requirements that must all hold, as well as matchLabels."""
