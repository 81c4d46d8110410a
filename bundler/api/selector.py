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
    key: str
    operator: SelectorOperator
    values: list[str] = Field(default_factory=list)


class LabelSelector(ApiModel):
    """matchLabels AND matchExpressions; `{}` matches everything."""

    matchLabels: dict[str, str] = Field(default_factory=dict)
    matchExpressions: list[LabelSelectorRequirement] = Field(default_factory=list)
