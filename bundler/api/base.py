"""The base of every API model: wire names as fields, unknown fields rejected, values frozen."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class ApiModel(BaseModel):
    """Spec-side model: unknown fields are errors that name their path; instances are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    def to_wire(self) -> dict[str, Any]:
        """The JSON-shaped dict as stored and hashed: every field, unset optionals (None) left
        out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
