"""The base of every API model: wire names as fields, unknown fields rejected, values frozen."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class ApiModel(BaseModel):
    """Spec-side model: unknown fields are errors that name their path; instances are immutable."""

    # Descriptions (what `kubectl explain` shows, carried into the CRDs by bundler.api.crdgen) are
    # written one way only: a model's docstring describes the object, and the string literal under
    # a field (`use_attribute_docstrings`) describes the field. Why this one: each declaration
    # stays the one line the wire contract reads best as, with its documentation right under it
    # (editors show it as the attribute's doc), where `Field(description=...)` would wrap most
    # fields in a call. So `Field(description=...)` is not used. Docstrings are user-facing text;
    # notes for developers are `#` comments. pydantic reads them from the source as each model
    # class is built (the wheel ships the .py files), some 50 ms at import on Python 3.11.
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON-shaped dict as stored and hashed: every field, unset optionals (None) left
        out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
